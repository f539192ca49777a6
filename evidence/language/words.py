"""The curated word classes, read from the `Word` table once per question, tray reply and Scout run.

Most classes are words that name no topic (grammar, ways of asking, request words); two are cues that say
which part of a question a word is (an outcome, older patients). Every reader of questions, titles and tray
requests asks `words(...)` for the classes it needs (`WordClass`) instead of keeping a list of its own. The
rows are curators' data: `refresh()` reads the table (one query; the sets are built once per distinct table
content) where a unit of language work starts - the understanding step of every question, every tray reply
and every Evidence Scout run - so a curator's edit applies from the next one. Search reranking and other
readers in between use the last reading of their process. Where no row has been seeded yet (a new database, a
process with no database) the words shipped in `seed/vocabulary.json` are read: they are the rows
`seed_evidence` writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import structlog
from django.apps import apps
from django.db import DatabaseError, models

from evidence.table_digest import ReadPerChange, table_digests

logger = structlog.get_logger(__name__)

# The curated vocabulary shipped with the code: tags, scenarios, rules, abbreviations and these words.
VOCABULARY_PATH = Path(__file__).resolve().parent.parent / "seed" / "vocabulary.json"


class WordClass(models.TextChoices):
    """What a word is to the code that reads questions, titles and tray requests."""

    GRAMMAR = "grammar", "Grammar word (a, the, which, may)"
    SCAFFOLDING = "scaffolding", "Built into every clinical question (patient, study, evidence, recommend)"
    ASKING = "asking", "How a question asks, not what about (safe, dose, treatment, better)"
    JUDGING = "judging", "Judges or measures; dropped from a PubMed search phrase (satisfactory, severity)"
    RESTATING = "restating", "Only restates a tray request; no search block of its own (treat, therapy, diagnose)"
    REQUEST = "request", "Words of a search request, never searched for (find, show, papers, PubMed)"
    ROWS = "rows", "Points at a tray's rows or how they are asked about (loaded, row, column)"
    BROAD = "broad", "Too broad a condition to search a drug under (cancer, disease, syndrome)"
    # Cues: words that do name something, but say which part of the question they are.
    OUTCOME = "outcome", "Names an outcome, not the patient's condition, after the treatment (stroke, survival)"
    OLDER = "older", "Says the patients are older adults (elderly, geriatric, octogenarian)"
    POPULATION = "population", "Says who the patients are (children, pregnant, women, adults)"
    DISEASE = "disease", "Names a disease or condition by its head noun (cancer, syndrome, fracture, sepsis)"
    INTERVENTION = "intervention", "Names an intervention by its head noun (surgery, vaccine, stent, statin, insulin)"
    ACRONYM = "acronym", "An acronym that is also an ordinary word: a tag synonym counts only in capitals (CAP, DES)"
    ABSOLUTE = "absolute", "Makes a statement absolute: a claim using it needs a source that does (cures, every)"
    # Care settings: where the patients are treated (`evidence.care_settings`).
    OUTPATIENT = "outpatient", "Patients treated outside hospital (outpatient, outpt, ambulatory)"
    INPATIENT = "inpatient", "Patients treated in hospital (inpatient, hospitalised, admitted)"
    CRITICAL_CARE = "critical_care", "Patients in intensive care or critically ill (ICU, critically ill, severe CAP)"


T = TypeVar("T")
WordRow = tuple[str, tuple[str, ...]]  # text, classes


@dataclass(frozen=True)
class Words:
    """One reading of the word table: each class's words, and what readers derive from them."""

    by_class: Mapping[str, frozenset[str]]
    # Unions and derived sets (stems, folded forms) are built once per reading, on first use.
    _unions: dict[tuple[str, ...], frozenset[str]] = field(default_factory=dict, compare=False, repr=False)
    _derived: dict[Callable[..., Any], Any] = field(default_factory=dict, compare=False, repr=False)
    _patterns: dict[tuple[str, ...], re.Pattern[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_rows(cls, rows: Iterable[WordRow]) -> Words:
        by_class: dict[str, set[str]] = {choice: set() for choice in WordClass.values}
        for text, classes in rows:
            for name in classes:
                by_class.setdefault(name, set()).add(text)
        return cls({name: frozenset(found) for name, found in by_class.items()})

    def of(self, *classes: str) -> frozenset[str]:
        """Return the words in any of `classes`."""
        found = self._unions.get(classes)
        if found is None:
            found = self._unions[classes] = frozenset().union(*(self.by_class.get(name, ()) for name in classes))
        return found

    def pattern(self, *classes: str) -> re.Pattern[str]:
        """Return the words in any of `classes` as one case-blind pattern of whole words, longest first ("severe
        CAP" before "CAP"), a phrase's words joined by any space; a pattern that matches nothing when none."""
        if classes not in self._patterns:
            phrases = sorted(self.of(*classes), key=len, reverse=True)
            alternatives = "|".join(r"\s+".join(map(re.escape, phrase.split())) for phrase in phrases)
            self._patterns[classes] = re.compile(
                rf"(?<![\w-])(?:{alternatives})(?![\w-])" if phrases else r"(?!)", re.IGNORECASE
            )
        return self._patterns[classes]

    def derived(self, build: Callable[[Words], T]) -> T:
        """Return `build(self)`, built once for this reading (e.g. the stems of a class)."""
        if build not in self._derived:
            self._derived[build] = build(self)
        return self._derived[build]


@lru_cache(maxsize=4)
def _built(rows: tuple[WordRow, ...]) -> Words:
    return Words.from_rows(rows)


def words_by_text(section: Mapping[str, Iterable[str]]) -> tuple[WordRow, ...]:
    """Turn the seed file's `words` section (class → words) into (text, classes) rows, one per word."""
    classes: dict[str, set[str]] = {}
    for name, texts in section.items():
        for text in texts:
            classes.setdefault(text, set()).add(name)
    return tuple((text, tuple(sorted(names))) for text, names in sorted(classes.items()))


@lru_cache(maxsize=1)
def shipped_rows() -> tuple[WordRow, ...]:
    """Return the words shipped in `seed/vocabulary.json` as (text, classes) rows."""
    return words_by_text(json.loads(VOCABULARY_PATH.read_text()).get("words", {}))


_current: Words | None = None
_READ: ReadPerChange[Words] = ReadPerChange()  # the table last read, by its digest


def refresh() -> Words:
    """Read the word table and make it the reading every caller of `words` sees: one small query while no row
    changed since the last reading (`table_digest`), the rows themselves when one did.

    A database that cannot be read keeps the last reading (logged): a question is still answered.
    """
    global _current
    table = apps.get_model("evidence", "Word")  # by name: this module is read before the models are loaded

    def read() -> Words:
        rows = table.objects.order_by("text").values_list("text", "classes")
        return _built(_with_shipped_classes(tuple((text, tuple(classes)) for text, classes in rows)))

    try:
        _current = _READ.get(table_digests(table._meta.db_table), read)
    except DatabaseError as exc:
        logger.warning("words_not_read", error=str(exc))
        return current()
    return _current


def _with_shipped_classes(rows: tuple[WordRow, ...]) -> tuple[WordRow, ...]:
    """Return the table's rows, plus the shipped words of any class the table holds no row of.

    A database seeded before a class existed (or never seeded) reads that class as shipped until
    `seed_evidence` writes its rows.
    """
    present = {name for _, classes in rows for name in classes}
    added = tuple(
        (text, kept)
        for text, classes in shipped_rows()
        if (kept := tuple(name for name in classes if name not in present))
    )
    return rows + added if added else rows


def current() -> Words:
    """Return the reading made by the last `refresh()`, or the shipped words before the first."""
    return _current or _built(shipped_rows())


def words(*classes: str) -> frozenset[str]:
    """Return the current words in any of `classes` (no query: see `refresh`)."""
    return current().of(*classes)


# The words that are never a topic in a question or a text: what `content_terms` leaves out.
NOT_TOPIC = (WordClass.GRAMMAR.value, WordClass.SCAFFOLDING.value)
