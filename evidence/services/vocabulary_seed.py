"""Load the tag vocabulary, anchor scenarios, rules, abbreviations, drug classes and words from `seed/vocabulary.json`.

Idempotent: rows are matched by code / key / name and saved only when a value differs. Rows a
curator edited after seeding are kept (like `evidence_seed`) unless `overwrite_curator_edits`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import models, transaction

from evidence.language.words import words_by_text
from evidence.models import Abbreviation, AnchorScenario, ClassificationRule, DrugClass, Tag, Word
from evidence.services.seed import SEED_CHANGE_REASON, VOCABULARY_PATH, SeedError, edited_by_curator

_Row = TypeVar("_Row", bound=models.Model)


@dataclass
class VocabularyCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0

    def __str__(self) -> str:
        return f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged, {self.kept} kept"


@dataclass
class VocabularySeedResult:
    tags: VocabularyCounts = field(default_factory=VocabularyCounts)
    scenarios: VocabularyCounts = field(default_factory=VocabularyCounts)
    rules: VocabularyCounts = field(default_factory=VocabularyCounts)
    abbreviations: VocabularyCounts = field(default_factory=VocabularyCounts)
    drug_classes: VocabularyCounts = field(default_factory=VocabularyCounts)
    words: VocabularyCounts = field(default_factory=VocabularyCounts)


def _upsert(
    model: type[_Row], lookup: dict[str, Any], values: dict[str, Any], counts: VocabularyCounts, overwrite: bool
) -> _Row:
    instance = model._default_manager.filter(**lookup).first()
    return _save(model, instance, lookup, values, counts, overwrite)


def _save(
    model: type[_Row],
    instance: _Row | None,
    lookup: dict[str, Any],
    values: dict[str, Any],
    counts: VocabularyCounts,
    overwrite: bool,
) -> _Row:
    if instance is None:
        instance = model(**lookup, **values)
        action = "created"
    else:
        if all(getattr(instance, name) == value for name, value in values.items()):
            counts.unchanged += 1
            return instance
        if edited_by_curator(instance) and not overwrite:
            counts.kept += 1
            return instance
        for name, value in values.items():
            setattr(instance, name, value)
        action = "updated"
    try:
        instance.full_clean(validate_unique=False)
    except ValidationError as exc:
        raise SeedError(f"{model.__name__} {lookup}: {'; '.join(exc.messages)}") from exc
    instance._change_reason = SEED_CHANGE_REASON  # type: ignore[attr-defined]
    instance.save()
    setattr(counts, action, getattr(counts, action) + 1)
    return instance


def _upsert_sense(row: dict[str, Any], counts: VocabularyCounts, overwrite: bool) -> Abbreviation:
    """Upsert one sense of an abbreviation: a term may have several, told apart by what they stand for.

    A sense is found by its term and first expansion, or, where a curator reworded that expansion,
    by its term and context (the usual reading has none).
    """
    term, context = row["term"], list(row.get("context", []))
    values = {
        "expansions": row["expansions"],
        "case_sensitive": bool(row.get("case_sensitive", False)),
        "context": context,
    }
    senses = Abbreviation.objects.filter(term=term).order_by("pk")
    instance = next((s for s in senses if s.expansions[:1] == row["expansions"][:1]), None)
    instance = instance or next((s for s in senses if s.context == context), None)
    return _save(Abbreviation, instance, {"term": term}, values, counts, overwrite)


@transaction.atomic
def vocabulary_seed(*, path: Path | None = None, overwrite_curator_edits: bool = False) -> VocabularySeedResult:
    """Upsert tags, scenarios, rules, abbreviations, drug classes and words; raise SeedError (writing nothing) on a
    bad file."""
    path = path or VOCABULARY_PATH
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SeedError(f"Cannot read vocabulary file {path}: {exc}") from exc
    result = VocabularySeedResult()
    tags: dict[str, Tag] = {}
    for row in data.get("tags", []):
        values = {k: row[k] for k in ("kind", "label", "synonyms", "mesh_terms") if k in row}
        values["is_imaging_term"] = bool(row.get("is_imaging_term", False))
        values["is_generic"] = bool(row.get("is_generic", False))
        values["is_modifier"] = bool(row.get("is_modifier", False))
        values["answer_kind"] = str(row.get("answer_kind", ""))
        values["patient_wordings"] = list(row.get("patient_wordings", []))
        tags[row["code"]] = _upsert(Tag, {"code": row["code"]}, values, result.tags, overwrite_curator_edits)
    for row in data.get("tags", []):
        broader = row.get("broader")
        if broader and broader not in tags:
            raise SeedError(f"Tag {row['code']!r}: broader tag {broader!r} is not in the vocabulary.")
        tag = tags[row["code"]]
        wanted = tags[broader] if broader else None
        if tag.broader_id != (wanted.pk if wanted else None):
            tag.broader = wanted
            tag._change_reason = SEED_CHANGE_REASON  # type: ignore[attr-defined]
            tag.save(update_fields=["broader"])
    scenarios: dict[str, AnchorScenario] = {}
    for row in data.get("anchor_scenarios", []):
        values = {k: row[k] for k in ("title", "description", "disease_tags", "decision_tags")}
        scenarios[row["key"]] = _upsert(
            AnchorScenario, {"key": row["key"]}, values, result.scenarios, overwrite_curator_edits
        )
    for row in data.get("classification_rules", []):
        key = row.get("anchor_scenario")
        if key and key not in scenarios:
            raise SeedError(f"Rule {row['name']!r}: anchor scenario {key!r} is not defined.")
        values = {
            k: row[k]
            for k in ("classification", "disease_tags", "decision_tags", "allowed_mesh", "excluded_mesh", "priority")
        }
        values["anchor_scenario"] = scenarios[key] if key else None
        _upsert(ClassificationRule, {"name": row["name"]}, values, result.rules, overwrite_curator_edits)
    for row in data.get("abbreviations", []):
        _upsert_sense(row, result.abbreviations, overwrite_curator_edits)
    for row in data.get("drug_classes", []):
        values = {"wordings": list(row.get("wordings", [])), "members": list(row["members"]), "source": row["source"]}
        _upsert(DrugClass, {"name": row["name"]}, values, result.drug_classes, overwrite_curator_edits)
    stored = {word.text: word for word in Word.objects.all()}
    for text, classes in words_by_text(data.get("words", {})):
        _save(Word, stored.get(text), {"text": text}, {"classes": list(classes)}, result.words, overwrite_curator_edits)
    return result
