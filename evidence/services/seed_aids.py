"""Load the decision-aid diagrams from `seed/decision_aids.json`: each box rests on a seeded curated finding.

Run after the library and vocabulary seeds (the boxes name findings by study and key, the aids name tags).
Idempotent: an aid is matched by its key and written only when it or its boxes differ; an aid a curator
edited since (the aid or one of its boxes) is kept unless `overwrite_curator_edits`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.db import transaction

from evidence.models import DecisionAid, DecisionStep, Finding, Study, Tag, TagKind
from evidence.services.seed import SEED_CHANGE_REASON, SeedCounts, SeedError, edited_by_curator

AIDS_PATH = Path(__file__).resolve().parent.parent / "seed" / "decision_aids.json"
AID_FIELDS = ("title", "caption", "disease_tags", "decision_tags")


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))["decision_aids"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise SeedError(f"Cannot read decision aids file {path}: {exc}") from exc
    if not isinstance(rows, list):
        raise SeedError(f"{path}: decision_aids must be a list.")
    return rows


def _resolve(rows: list[dict[str, Any]], path: Path) -> list[tuple[dict[str, Any], Study | None, list[Finding]]]:
    """Return each row with its source study and the finding of each box; raise SeedError naming every problem."""
    kinds = dict(Tag.objects.values_list("code", "kind"))
    studies = {study.study_name: study for study in Study.objects.all()}
    seeded = Finding.objects.exclude(seed_key="").select_related("study")
    findings = {(finding.study.study_name, finding.seed_key): finding for finding in seeded}
    problems: list[str] = []
    resolved = []
    for number, row in enumerate(rows, start=1):
        name = row.get("key") or f"row {number}"
        for field, kind in (("disease_tags", TagKind.DISEASE), ("decision_tags", TagKind.DECISION)):
            unknown = [code for code in row.get(field) or [] if kinds.get(code) != kind]
            if not row.get(field) or unknown:
                problems.append(f"{name}: {field} must name {kind} tags of the vocabulary ({', '.join(unknown)})")
        boxes = []
        for step in row.get("steps") or []:
            finding = findings.get((step.get("study"), step.get("finding")))
            if finding is None or not str(step.get("text", "")).strip():
                problems.append(f"{name}: box {step.get('text', '')[:40]!r} needs text and a seeded finding")
            else:
                boxes.append(finding)
        if not boxes:
            problems.append(f"{name}: a diagram needs at least one box")
        if row.get("source") and row["source"] not in studies:
            problems.append(f"{name}: source {row['source']!r} is not a library study")
        resolved.append((row, studies.get(row.get("source", "")), boxes))
    if problems:
        raise SeedError(f"{path} is not a valid decision aids file; nothing was written:\n" + "\n".join(problems))
    return resolved


def _steps(aid: DecisionAid) -> list[tuple[str, int]]:
    return [(step.text, step.finding_id) for step in aid.steps.all()]


def _edited(aid: DecisionAid) -> bool:
    return edited_by_curator(aid) or any(edited_by_curator(step) for step in aid.steps.all())


@transaction.atomic
def decision_aids_seed(*, path: Path | None = None, overwrite_curator_edits: bool = False) -> SeedCounts:
    """Upsert the seeded diagram aids and their boxes; raise SeedError (writing nothing) on a bad file."""
    path = path or AIDS_PATH
    counts = SeedCounts()
    for row, source, boxes in _resolve(_read(path), path):
        values = {name: row.get(name) or ([] if name.endswith("_tags") else "") for name in AID_FIELDS}
        values["source"] = source
        wanted = [(step["text"].strip(), finding.pk) for step, finding in zip(row["steps"], boxes, strict=True)]
        aid = DecisionAid.objects.filter(key=row["key"]).first()
        if aid is not None:
            if all(getattr(aid, name) == value for name, value in values.items()) and _steps(aid) == wanted:
                counts.unchanged += 1
                continue
            if _edited(aid) and not overwrite_curator_edits:
                counts.kept_curator_edits += 1
                continue
        is_new = aid is None
        aid = aid or DecisionAid(key=row["key"])
        for name, value in values.items():
            setattr(aid, name, value)
        aid._change_reason = SEED_CHANGE_REASON  # type: ignore[attr-defined]
        aid.save()
        if _steps(aid) != wanted:
            aid.steps.all().delete()
            for position, (text, finding_id) in enumerate(wanted, start=1):
                step = DecisionStep(aid=aid, position=position, text=text, finding_id=finding_id)
                step._change_reason = SEED_CHANGE_REASON  # type: ignore[attr-defined]
                step.save()
        if is_new:
            counts.created += 1
        else:
            counts.updated += 1
    return counts
