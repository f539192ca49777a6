"""Load the curated seed content (landmark studies and guidance items) into the evidence library."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeGuard, TypeVar

from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Q

from evidence import identifiers
from evidence.language.words import VOCABULARY_PATH
from evidence.models import EvidenceStrength, GuidanceItem, Study, Tag, TagKind
from evidence.services.seed_findings import findings_problems, findings_write

_Row = TypeVar("_Row", GuidanceItem, Study)

SEED_PATH = Path(__file__).resolve().parent.parent / "seed" / "landmark_studies.json"
# Recorded as the history change reason of every row the seed writes: a row whose latest history entry
# carries another reason was edited by a curator and is left alone unless overwriting is requested.
SEED_CHANGE_REASON = "seed_evidence"

GUIDANCE_FIELDS = ("title", "statement", "disease_tags", "decision_tags")
STUDY_FIELDS = (
    "study_name", "aliases", "kind", "pmid", "pmcid", "doi", "nct_number", "title", "authors_short",
    "journal", "publication_year", "citation", "organization", "disease_tags", "decision_tags",
    "anchor_scenarios", "result_context", "clinical_settings", "test_names", "evidence_strength",
    "sample_size", "study_design", "key_finding", "url",
)
STUDY_KEYS = frozenset(STUDY_FIELDS) | {"guidance_item", "findings"}
STUDY_REQUIRED = frozenset({"study_name", "title", "key_finding"})
WELL_FORMED = {"pmid": identifiers.is_pmid, "doi": identifiers.is_doi, "nct_number": identifiers.is_nct}
STRENGTHS = {label: value for value, label in EvidenceStrength.choices}


class SeedError(Exception):
    """The seed file cannot be loaded; the message names the file and every offending row."""


@dataclass
class SeedCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_curator_edits: int = 0

    def __str__(self) -> str:
        text = f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged"
        if self.kept_curator_edits:
            text += f", {self.kept_curator_edits} kept (edited by a curator since the last seed)"
        return text


@dataclass
class SeedResult:
    studies: SeedCounts = field(default_factory=SeedCounts)
    guidance_items: SeedCounts = field(default_factory=SeedCounts)
    findings: SeedCounts = field(default_factory=SeedCounts)

    @property
    def created(self) -> int:
        return self.studies.created + self.guidance_items.created + self.findings.created

    @property
    def updated(self) -> int:
        return self.studies.updated + self.guidance_items.updated + self.findings.updated

    @property
    def unchanged(self) -> int:
        return self.studies.unchanged + self.guidance_items.unchanged + self.findings.unchanged


@dataclass
class _Planned(Generic[_Row]):
    """One validated row: the instance to write and whether writing it would change anything."""

    instance: _Row
    is_new: bool
    changed: bool
    curator_edited: bool
    guidance_title: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)


@transaction.atomic
def evidence_seed(*, path: Path | None = None, overwrite_curator_edits: bool = False) -> SeedResult:
    """Upsert every guidance item and study of the seed file; validate all rows before writing any.

    Studies are matched by study_name, then by PMID / DOI / NCT number (so a renamed study is updated,
    not duplicated); guidance items by title. Rows whose values already match are not saved, so a
    re-run writes nothing and adds no history. Rows a curator changed after the last seed are kept
    unless `overwrite_curator_edits` is set.
    """
    path = path or SEED_PATH
    content = _read(path)
    errors: list[str] = []
    guidance = _plan_guidance(content["guidance_items"], errors)
    studies = _plan_studies(content["studies"], {plan.instance.title for plan in guidance}, errors)
    if errors:
        raise SeedError(f"{path} is not a valid seed file; nothing was written:\n" + "\n".join(errors))

    result = SeedResult()
    by_title: dict[str, GuidanceItem] = {}
    for plan in guidance:
        _write(plan, result.guidance_items, overwrite_curator_edits)
        by_title[plan.instance.title] = plan.instance
    for study_plan in studies:
        study = study_plan.instance
        target = by_title[study_plan.guidance_title] if study_plan.guidance_title else None
        if study.guidance_item_id != (target.pk if target else None):
            study_plan.changed = True
        study.guidance_item = target
        _write(study_plan, result.studies, overwrite_curator_edits)
        if study.pk is not None:
            _write_findings(study, study_plan.findings, result.findings, overwrite_curator_edits)
    return result


def _write_findings(
    study: Study, rows: list[dict[str, Any]], counts: SeedCounts, overwrite_curator_edits: bool
) -> None:
    created, updated, unchanged, kept = findings_write(
        study,
        rows,
        change_reason=SEED_CHANGE_REASON,
        edited_by_curator=edited_by_curator,
        overwrite_curator_edits=overwrite_curator_edits,
    )
    counts.created += created
    counts.updated += updated
    counts.unchanged += unchanged
    counts.kept_curator_edits += kept


def _decision_codes() -> frozenset[str]:
    """Return the decision tags a seeded finding may carry: the vocabulary file's and the database's."""
    try:
        rows = json.loads(VOCABULARY_PATH.read_text(encoding="utf-8")).get("tags", [])
    except (OSError, ValueError, AttributeError):
        rows = []
    from_file = {row.get("code") for row in rows if isinstance(row, dict) and row.get("kind") == TagKind.DECISION}
    stored = set(Tag.objects.filter(kind=TagKind.DECISION).values_list("code", flat=True))
    return frozenset(code for code in from_file | stored if isinstance(code, str))


def _read(path: Path) -> dict[str, list[dict[str, Any]]]:
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise SeedError(f"Seed file {path} does not exist.") from exc
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise SeedError(f"{path} is not valid JSON: {exc.msg} at {where}.") from exc
    if not isinstance(content, dict) or set(content) != {"guidance_items", "studies"}:
        raise SeedError(f'{path} must be a JSON object with exactly the keys "guidance_items" and "studies".')
    for key in ("guidance_items", "studies"):
        if not isinstance(content[key], list) or not all(isinstance(row, dict) for row in content[key]):
            raise SeedError(f'{path}: "{key}" must be a list of JSON objects.')
    return content


def _plan_guidance(rows: list[dict[str, Any]], errors: list[str]) -> list[_Planned[GuidanceItem]]:
    plans: list[_Planned[GuidanceItem]] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=1):
        label = f"guidance_items row {number} ({row.get('title', '<no title>')!r})"
        if problems := _key_problems(row, frozenset(GUIDANCE_FIELDS), required=frozenset(GUIDANCE_FIELDS)):
            errors.append(f"{label}: {problems}")
            continue
        if problems := _type_problems(GuidanceItem, row):
            errors.append(f"{label}: {problems}")
            continue
        if row["title"] in seen:
            errors.append(f"{label}: the title appears more than once in the file.")
            continue
        seen.add(row["title"])
        item = GuidanceItem.objects.filter(title=row["title"]).first() or GuidanceItem()
        plans.append(_plan(item, row, GUIDANCE_FIELDS, label, errors, exclude=()))
    return plans


def _plan_studies(
    rows: list[dict[str, Any]], guidance_titles: set[str], errors: list[str]
) -> list[_Planned[Study]]:
    plans: list[_Planned[Study]] = []
    decision_codes = _decision_codes()
    claimed: dict[str, str] = {}  # "pmid:123" / "study_name:X" -> label of the first row that used it
    for number, row in enumerate(rows, start=1):
        label = f"studies row {number} ({row.get('study_name', '<no study_name>')!r})"
        if problems := _key_problems(row, STUDY_KEYS, required=STUDY_REQUIRED):
            errors.append(f"{label}: {problems}")
            continue
        if finding_problems := findings_problems(row.get("findings", []), decision_codes=decision_codes):
            errors.append(f"{label}: " + "; ".join(finding_problems) + ".")
            continue
        values = {name: row.get(name) for name in STUDY_FIELDS if name in row}
        if problems := _type_problems(Study, {**values, "evidence_strength": None}):
            errors.append(f"{label}: {problems}")
            continue
        strength = values.get("evidence_strength", "moderate")
        if not _is_one_of(strength, STRENGTHS):
            errors.append(f"{label}: evidence_strength {strength!r} must be one of {', '.join(STRENGTHS)}.")
            continue
        values["evidence_strength"] = STRENGTHS[strength]
        guidance_title = row.get("guidance_item")
        if guidance_title is not None and not _is_one_of(guidance_title, guidance_titles):
            errors.append(f"{label}: guidance_item {guidance_title!r} is not a title in guidance_items.")
            continue
        keys = _identity_keys(values)
        if duplicates := [key for key in keys if key in claimed]:
            kind, value = duplicates[0].split(":", 1)
            errors.append(f"{label}: {kind} {value} is already used by {claimed[duplicates[0]]}.")
            continue
        claimed.update(dict.fromkeys(keys, label))
        try:
            study = _existing_study(values)
        except SeedError as exc:
            errors.append(f"{label}: {exc}")
            continue
        plan = _plan(study or Study(), values, STUDY_FIELDS, label, errors, exclude=("guidance_item",))
        plan.guidance_title = guidance_title
        plan.findings = row.get("findings", [])
        plans.append(plan)
    return plans


def _key_problems(row: dict[str, Any], allowed: frozenset[str], *, required: frozenset[str]) -> str:
    problems = []
    if unknown := sorted(set(row) - allowed):
        problems.append(f"unknown field(s) {', '.join(unknown)}")
    if missing := sorted(required - {key for key, value in row.items() if value not in (None, "")}):
        problems.append(f"missing field(s) {', '.join(missing)}")
    return "; ".join(problems) + "." if problems else ""


def _identity_keys(values: dict[str, Any]) -> list[str]:
    keys = [f"study_name:{values['study_name']}"]
    for name, value in _identifiers(values).items():
        keys.append(f"{name}:{value.lower() if name == 'doi' else value}")
    return keys


def _identifiers(values: dict[str, Any]) -> dict[str, str]:
    found = {
        "pmid": (values.get("pmid") or "").strip().removeprefix("PMID:").strip(),
        "doi": identifiers.normalize_doi(values.get("doi") or ""),
        "nct_number": (values.get("nct_number") or "").strip().upper(),
    }
    return {name: value for name, value in found.items() if value}


def _existing_study(values: dict[str, Any]) -> Study | None:
    """Return the study this row updates: same name, else the one study sharing an identifier."""
    study = Study.objects.filter(study_name=values["study_name"]).first()
    if study is not None:
        return study
    query = Q()
    for name, value in _identifiers(values).items():
        if WELL_FORMED[name](value):  # a malformed identifier fails validation later; never query with it
            query |= Q(doi__iexact=value) if name == "doi" else Q(**{name: value})
    if not query:
        return None
    matches = list(Study.objects.filter(query)[:2])
    if len(matches) > 1:
        names = " and ".join(repr(match.study_name) for match in matches)
        raise SeedError(f"its identifiers match two different studies ({names}); fix the identifiers.")
    return matches[0] if matches else None


def _plan(
    instance: _Row,
    values: dict[str, Any],
    fields: tuple[str, ...],
    label: str,
    errors: list[str],
    *,
    exclude: tuple[str, ...],
) -> _Planned[_Row]:
    is_new = instance.pk is None
    before = {name: getattr(instance, name) for name in fields}
    for name in fields:
        if name not in values:
            continue
        setattr(instance, name, _field_value(instance, name, values[name]))
    try:
        instance.full_clean(exclude=list(exclude))
    except ValidationError as exc:
        errors.append(f"{label}: {_describe(exc)}")
    changed = is_new or any(getattr(instance, name) != before[name] for name in fields)
    return _Planned(instance, is_new, changed, curator_edited=not is_new and edited_by_curator(instance))


def _is_one_of(value: Any, allowed: Collection[str]) -> TypeGuard[str]:
    return isinstance(value, str) and value in allowed


def _type_problems(model: type[models.Model], values: dict[str, Any]) -> str:
    """Return a sentence naming the fields whose JSON type cannot fit the model field, or ""."""
    wrong = []
    for name, value in values.items():
        model_field = model._meta.get_field(name)
        if value is None:
            continue
        if isinstance(model_field, ArrayField):
            fits = isinstance(value, list) and all(isinstance(item, str) for item in value)
            expected = "a list of strings"
        elif isinstance(model_field, models.IntegerField):
            fits = isinstance(value, int) and not isinstance(value, bool)
            expected = "a whole number"
        else:
            fits = isinstance(value, str)
            expected = "a string"
        if not fits:
            wrong.append(f"{name} must be {expected}, not {value!r}")
    return "; ".join(wrong) + "." if wrong else ""


def _field_value(instance: models.Model, name: str, value: Any) -> Any:
    """Map JSON null to the field's empty value: "" for text, [] for tag lists, None for numbers."""
    if value is not None:
        return value
    model_field = instance._meta.get_field(name)
    if not isinstance(model_field, models.Field) or model_field.null:
        return None
    return model_field.get_default() if model_field.has_default() else ""


def _describe(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{name}: {' '.join(messages)}" for name, messages in exc.message_dict.items())
    return " ".join(exc.messages)


def edited_by_curator(instance: models.Model) -> bool:
    """Return True if the row's latest history entry was not written by a seed run."""
    # `history` is added to the model class by django-simple-history's HistoricalRecords.
    history = instance.history  # type: ignore[attr-defined]
    latest = history.order_by("-history_date", "-history_id").first()
    return latest is not None and latest.history_change_reason != SEED_CHANGE_REASON


def _write(plan: _Planned[GuidanceItem] | _Planned[Study], counts: SeedCounts, overwrite_curator_edits: bool) -> None:
    if not plan.changed:
        counts.unchanged += 1
        return
    if plan.curator_edited and not overwrite_curator_edits:
        plan.instance.refresh_from_db()
        counts.kept_curator_edits += 1
        return
    # django-simple-history reads this attribute when the save writes the history row.
    plan.instance._change_reason = SEED_CHANGE_REASON  # type: ignore[union-attr]
    plan.instance.save()
    if plan.is_new:
        counts.created += 1
    else:
        counts.updated += 1
