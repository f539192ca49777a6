"""Test helpers: the seeded vocabulary and rules as plain objects (no database needed)."""

import json
from functools import cache

from evidence.classification import Rule
from evidence.concepts import Lexicon
from evidence.services.vocabulary_seed import VOCABULARY_PATH
from evidence.vocabulary import Vocabulary, VocabularyTerm


@cache
def seed_data() -> dict:
    return json.loads(VOCABULARY_PATH.read_text())


@cache
def seeded_vocabulary() -> Vocabulary:
    return Vocabulary.from_terms(
        VocabularyTerm(
            code=row["code"],
            kind=row["kind"],
            label=row["label"],
            synonyms=tuple(row["synonyms"]),
            mesh_terms=tuple(row["mesh_terms"]),
            broader=row["broader"],
            is_imaging_term=row["is_imaging_term"],
            is_generic=row.get("is_generic", False),
            is_modifier=row.get("is_modifier", False),
            patient_wordings=tuple(row.get("patient_wordings", ())),
            answer_kind=row.get("answer_kind", ""),
        )
        for row in seed_data()["tags"]
    )


def seeded_lexicon(*extra: tuple) -> Lexicon:
    """Return the curated abbreviations as seeded, plus `extra` (term, expansions, case-sensitive[, context]) rows."""
    rows = [
        (row["term"], row["expansions"], bool(row.get("case_sensitive")), row.get("context", []))
        for row in seed_data()["abbreviations"]
    ]
    classes = [(row["name"], row["wordings"], row["members"]) for row in seed_data()["drug_classes"]]
    return Lexicon.build([*rows, *extra], classes)


@cache
def seeded_rules() -> list[Rule]:
    return [
        Rule(
            name=row["name"],
            classification=row["classification"],
            disease_tags=tuple(row["disease_tags"]),
            decision_tags=tuple(row["decision_tags"]),
            allowed_mesh=tuple(row["allowed_mesh"]),
            excluded_mesh=tuple(row["excluded_mesh"]),
            anchor_scenario=row["anchor_scenario"],
            priority=row["priority"],
        )
        for row in seed_data()["classification_rules"]
    ]
