"""The curated findings of the seed file: validated with their study's row, written after it.

Each finding in the seed has a `key` unique within its study, so a re-seed updates the finding it
wrote before rather than adding a second, and leaves a finding a curator has edited since alone
(unless overwriting is asked for). Seeded findings start "awaiting review": a curator marks them
reviewed in the admin; a seed change to what a reviewed finding says sends it back for review.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ValidationError

from evidence.models import Finding, Study

FINDING_FIELDS = ("statement", "decision_tags", "recommendation_class", "evidence_level", "source_url", "locator")
FINDING_KEYS = frozenset(FINDING_FIELDS) | {"key"}
FINDING_REQUIRED = frozenset({"key", "statement", "source_url", "locator"})


def findings_problems(rows: Any, *, decision_codes: frozenset[str]) -> list[str]:
    """Return what is wrong with a study row's "findings" list (empty when every finding is well formed)."""
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return ['"findings" must be a list of JSON objects']
    problems: list[str] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        label = f"finding {number} ({row.get('key', '<no key>')!r})"
        if unknown := sorted(set(row) - FINDING_KEYS):
            problems.append(f"{label}: unknown field(s) {', '.join(unknown)}")
        if missing := sorted(name for name in FINDING_REQUIRED if not row.get(name)):
            problems.append(f"{label}: missing field(s) {', '.join(missing)}")
            continue
        if not all(isinstance(row.get(name, ""), str) for name in FINDING_KEYS - {"decision_tags"}):
            problems.append(f"{label}: every field but decision_tags must be a string")
            continue
        tags = row.get("decision_tags", [])
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            problems.append(f"{label}: decision_tags must be a list of strings")
            continue
        if unknown_tags := sorted(set(tags) - decision_codes):
            problems.append(f"{label}: {', '.join(unknown_tags)} is not a decision tag of the vocabulary")
        if row["key"] in seen:
            problems.append(f"{label}: the key appears twice in this study")
        seen.add(row["key"])
        try:
            _finding(Study(), row, position=number).full_clean(exclude=["study"])
        except ValidationError as exc:
            problems.append(f"{label}: {' '.join(exc.messages)}")
    return problems


def _finding(study: Study, row: dict[str, Any], *, position: int, instance: Finding | None = None) -> Finding:
    finding = instance or Finding(study=study, seed_key=row["key"])
    for name in FINDING_FIELDS:
        setattr(finding, name, row.get(name) or ([] if name == "decision_tags" else ""))
    finding.position = position
    return finding


def findings_write(
    study: Study,
    rows: list[dict[str, Any]],
    *,
    change_reason: str,
    edited_by_curator: Callable[[Finding], bool],
    overwrite_curator_edits: bool,
) -> tuple[int, int, int, int]:
    """Write a study's seeded findings; return (created, updated, unchanged, kept because a curator edited them).

    Every save records `change_reason` in the history, which is how `edited_by_curator` tells the
    seed's writes from a curator's.
    """
    created = updated = unchanged = kept = 0
    existing = {finding.seed_key: finding for finding in study.findings.exclude(seed_key="")}
    for position, row in enumerate(rows, start=1):
        current = existing.get(row["key"])
        if current is None:
            finding = _finding(study, row, position=position)
            finding._change_reason = change_reason  # type: ignore[attr-defined]
            finding.save()
            created += 1
            continue
        before = [getattr(current, name) for name in (*FINDING_FIELDS, "position")]
        _finding(study, row, position=position, instance=current)
        if before == [getattr(current, name) for name in (*FINDING_FIELDS, "position")]:
            unchanged += 1
        elif edited_by_curator(current) and not overwrite_curator_edits:
            current.refresh_from_db()
            kept += 1
        else:
            current._change_reason = change_reason  # type: ignore[attr-defined]
            current.save()
            updated += 1
    return created, updated, unchanged, kept
