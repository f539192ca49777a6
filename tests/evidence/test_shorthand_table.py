"""Clinical shorthand read in context: a table of abbreviations, each in a question a clinician would type.

Every row names the term as written and what the product must read it as: the first expansion of the
curated abbreviation sense that fits the question, or the label of the tag the term is a synonym of.
Ambiguous terms ("PsA", "MS", "PD", "CRT") appear once per sense, each in a question whose other words
call for that sense.
"""

import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from tests.evidence.brain import seed_data, seeded_lexicon, seeded_vocabulary

TABLE = json.loads((Path(__file__).parent / "data" / "shorthand_in_context.json").read_text())["rows"]
lexicon = cache(seeded_lexicon)


def reading(question: str, term: str) -> str:
    """Return what the product reads `term` in `question` as (first expansion, or tag label)."""
    read = lexicon().resolved(question)
    key = term if term in read.exact else term.lower()
    if key in read.wording:
        assert key in [hit for hit, _, _ in read.hits(question)], f"{term!r} is not read in {question!r}"
        return read.wording[key][0]
    vocabulary = seeded_vocabulary()
    labels = [vocabulary.label(m.code) for m in vocabulary.matches(question) if m.text.lower() == term.lower()]
    assert labels, f"{term!r} is neither a curated abbreviation nor a tag synonym in {question!r}"
    return labels[0]


def test_the_table_is_large_and_exercises_every_sense_of_every_ambiguous_term():
    terms = {row["term"] for row in TABLE}
    assert len(TABLE) >= 150 and len(terms) >= 150
    senses: dict[tuple[str, bool], set[str]] = defaultdict(set)
    for row in seed_data()["abbreviations"]:
        key = (row["term"] if row["case_sensitive"] else row["term"].lower(), row["case_sensitive"])
        senses[key].add(row["expansions"][0])
    ambiguous = {key: readings for key, readings in senses.items() if len(readings) > 1}
    assert len(ambiguous) >= 20
    asked: dict[str, set[str]] = defaultdict(set)
    for row in TABLE:
        asked[row["term"].lower()].add(row["means"])
    for (key, _), readings in ambiguous.items():
        unasked = readings - asked[key.lower()]
        assert not unasked, f"{key}: senses never asked in the table: {unasked}"


@pytest.mark.parametrize(("question", "term", "means"), [(r["question"], r["term"], r["means"]) for r in TABLE])
def test_shorthand_is_read_as_the_clinician_means_it(question, term, means):
    assert reading(question, term) == means


@pytest.mark.parametrize(
    ("question", "not_read_as"),
    [
        ("Pembrolizumab for PD-L1 high NSCLC?", "Parkinson disease"),  # the longer term wins its letters
        ("EGFR-mutant NSCLC: osimertinib first line?", "estimated glomerular filtration rate"),
        ("PSA screening in men over 70?", "psoriatic arthritis"),
    ],
)
def test_a_longer_or_exactly_capitalised_term_is_not_read_as_a_shorter_one(question, not_read_as):
    assert not_read_as not in lexicon().resolved(question).spelled_out(question)


def test_a_lower_case_lead_letter_is_part_of_a_tag_synonym():
    vocabulary = seeded_vocabulary()
    assert "ckd" in vocabulary.tags_in("AF with eGFR 22: apixaban dose?", "disease")
    assert "ckd" in vocabulary.tags_in("egfr 40 and metformin?", "disease")
    assert "ckd" not in vocabulary.tags_in("EGFR-mutant NSCLC: osimertinib first line?", "disease")
