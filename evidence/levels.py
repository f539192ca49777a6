"""Level of evidence of a publication, from its PubMed publication types, its MeSH design headings,
the library's curated study kind, or - when none of those says anything - its own wording.

Seven levels, strongest first: practice guideline, systematic review / meta-analysis, randomised
controlled trial, cohort / case-control, case series / report, narrative review, other. A level read
from words in the title or abstract is marked `inferred`: PubMed did not index it, we guessed
conservatively (a phrase must describe this study's design, not mention another study's).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import models


class EvidenceLevel(models.TextChoices):
    """The levels, strongest first (`LEVEL_RANK` orders them)."""

    GUIDELINE = "guideline", "Practice guideline"
    SYSTEMATIC_REVIEW = "systematic_review", "Systematic review / meta-analysis"
    RCT = "rct", "Randomised controlled trial"
    COHORT = "cohort", "Cohort / case-control"
    CASE_SERIES = "case_series", "Case series / report"
    NARRATIVE_REVIEW = "narrative_review", "Narrative review"
    OTHER = "other", "Other"


# Higher is stronger; used to break ties between equally relevant evidence and to sort tables.
LEVEL_RANK: dict[str, int] = {level.value: 6 - index for index, level in enumerate(EvidenceLevel)}

# Short badge text per level.
LEVEL_BADGES: dict[str, str] = {
    EvidenceLevel.GUIDELINE: "Guideline",
    EvidenceLevel.SYSTEMATIC_REVIEW: "Systematic review / MA",
    EvidenceLevel.RCT: "RCT",
    EvidenceLevel.COHORT: "Cohort / case-control",
    EvidenceLevel.CASE_SERIES: "Case series / report",
    EvidenceLevel.NARRATIVE_REVIEW: "Narrative review",
    EvidenceLevel.OTHER: "Other",
}

# PubMed publication types (lower case) per level, checked strongest level first.
_TYPE_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    (EvidenceLevel.GUIDELINE, frozenset({"practice guideline", "guideline", "consensus development conference",
                                         "consensus development conference, nih"})),
    (EvidenceLevel.SYSTEMATIC_REVIEW, frozenset({"systematic review", "meta-analysis"})),
    (EvidenceLevel.RCT, frozenset({"randomized controlled trial", "randomized controlled trial, veterinary"})),
    (EvidenceLevel.COHORT, frozenset({"observational study", "observational study, veterinary"})),
    (EvidenceLevel.CASE_SERIES, frozenset({"case reports"})),
    (EvidenceLevel.NARRATIVE_REVIEW, frozenset({"review", "scoping review"})),
)

# MeSH descriptors that describe the design of the indexed study itself (NLM's "study
# characteristics" headings), for records whose publication types are generic.
_MESH_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    # Not "Retrospective Studies" or "Follow-Up Studies": NLM also puts them on chart reviews and case series.
    (EvidenceLevel.COHORT, frozenset({"cohort studies", "prospective studies", "longitudinal studies",
                                      "case-control studies"})),
)

# Types that say nothing about design: a record carrying only these is treated as unindexed.
GENERIC_TYPES = frozenset({
    "journal article", "english abstract", "research support, non-u.s. gov't", "research support, n.i.h., extramural",
    "research support, n.i.h., intramural", "research support, u.s. gov't, p.h.s.",
    "research support, u.s. gov't, non-p.h.s.", "research support, american recovery and reinvestment act",
    "comparative study", "multicenter study", "evaluation study", "validation study", "preprint",
})

# Design words, conservative: each pattern must describe the study at hand ("we randomly assigned",
# "a randomised controlled trial of X" in the title) - a sentence citing someone else's meta-analysis
# in the background does not count.
_TITLE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Designs first: "Guideline adherence after stroke: a cohort study" is a cohort study.
    (EvidenceLevel.SYSTEMATIC_REVIEW, re.compile(r"\b(systematic review|meta-?analys[ie]s|meta-analytic)\b", re.I)),
    (EvidenceLevel.RCT, re.compile(r"\brandomi[sz]ed\b[^.:]{0,60}\btrial\b", re.I)),
    (EvidenceLevel.COHORT, re.compile(r"\b(cohort study|cohort analysis|case-control|case control study)\b", re.I)),
    (EvidenceLevel.CASE_SERIES, re.compile(r"\b(case report|case series|a case of)\b", re.I)),
    (EvidenceLevel.GUIDELINE, re.compile(r"^guidelines?\b|\b(clinical practice guidelines?|practice guidelines?|"
                                         r"consensus statement|position statement|guideline update)\b", re.I)),
    (EvidenceLevel.NARRATIVE_REVIEW, re.compile(r"(\bnarrative review\b|\breview of the literature\b|"
                                                r"\bliterature review\b|:\s*an? (?:updated? )?review\b)", re.I)),
)
_ABSTRACT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (EvidenceLevel.SYSTEMATIC_REVIEW, re.compile(
        r"\bwe (?:conducted|performed|undertook|carried out|did) an? (?:updated )?(?:systematic review|meta-?analysis)"
        r"|\b(?:this|the present|our) (?:systematic review|meta-?analysis)\b|\bwe systematically (?:searched|reviewed)",
        re.I)),
    (EvidenceLevel.RCT, re.compile(
        r"\b(were|was) randomi[sz]ed\b|\brandomly (assigned|allocated)\b|\bin this randomi[sz]ed\b|"
        r"\b(we|this) (conducted|performed|report) a[^.]{0,40}randomi[sz]ed\b", re.I)),
    (EvidenceLevel.COHORT, re.compile(
        r"\b(prospective|retrospective|population-based|nationwide|historical)\b[^.]{0,30}\bcohort\b|"
        r"\bcase-control study\b|\b(this|a) cohort study\b|\bmatched case-control\b", re.I)),
    (EvidenceLevel.CASE_SERIES, re.compile(
        r"\bwe (report|describe|present) (a|an|two|three|four|five|\d+) (cases?|patients?)\b|\bcase series\b", re.I)),
)


@dataclass(frozen=True)
class LevelAssessment:
    """A publication's level, whether it was inferred from its words, and what decided it."""

    level: str
    inferred: bool = False
    basis: str = ""

    @property
    def label(self) -> str:
        return EvidenceLevel(self.level).label

    @property
    def rank(self) -> int:
        return LEVEL_RANK[self.level]

    @property
    def badge(self) -> str:
        """Return the badge text, e.g. "RCT" or "Cohort / case-control (inferred)"."""
        return LEVEL_BADGES[self.level] + (" (inferred)" if self.inferred else "")


def level_from_types(publication_types: Iterable[str], mesh_terms: Iterable[str] = ()) -> str | None:
    """Return the level PubMed's publication types (or design MeSH headings) state, or None when they are generic."""
    types = {value.strip().lower() for value in publication_types if value and value.strip()}
    for level, names in _TYPE_LEVELS:
        if types & names:
            return level
    mesh = {value.strip().lower() for value in mesh_terms if value}
    for level, names in _MESH_LEVELS:
        if mesh & names:
            return level
    if types - GENERIC_TYPES:
        return EvidenceLevel.OTHER  # an editorial, letter, comment, trial protocol...: a stated type, not a study
    return None


def level_from_text(title: str, abstract: str = "") -> str | None:
    """Return the level the title or abstract's own design words describe, or None when they say nothing clear."""
    for level, pattern in _TITLE_PATTERNS:
        if pattern.search(title or ""):
            return level
    for level, pattern in _ABSTRACT_PATTERNS:
        if pattern.search(abstract or ""):
            return level
    return None


def assess_level(
    *, publication_types: Iterable[str] = (), mesh_terms: Iterable[str] = (), title: str = "", abstract: str = ""
) -> LevelAssessment:
    """Return the level of a PubMed record: from its indexing when PubMed gives one, else inferred from its words."""
    types = list(publication_types)
    stated = level_from_types(types, mesh_terms)
    if stated is not None:
        return LevelAssessment(stated, inferred=False, basis="publication types" if types else "MeSH design headings")
    guessed = level_from_text(title, abstract)
    if guessed is not None:
        return LevelAssessment(guessed, inferred=True, basis="design words in the title or abstract")
    return LevelAssessment(EvidenceLevel.OTHER, inferred=True, basis="no design stated or described")


# The library's curated kinds; a trial is randomised when its design says so.
_KIND_LEVELS = {
    "guideline": EvidenceLevel.GUIDELINE,
    "meta-analysis": EvidenceLevel.SYSTEMATIC_REVIEW,
    "systematic-review": EvidenceLevel.SYSTEMATIC_REVIEW,
    "cohort": EvidenceLevel.COHORT,
}
_RANDOMISED = re.compile(r"\brandomi[sz]ed\b|\brandomly\b", re.I)


def level_for_study_kind(*, kind: str, study_design: str = "") -> LevelAssessment:
    """Return the level of a curated library study from its kind and design text (curated, never inferred)."""
    if kind in _KIND_LEVELS:
        return LevelAssessment(_KIND_LEVELS[kind], basis="library study kind")
    if kind == "trial":
        if _RANDOMISED.search(study_design or ""):
            return LevelAssessment(EvidenceLevel.RCT, basis="library study design")
        return LevelAssessment(EvidenceLevel.OTHER, basis="library study design (trial not described as randomised)")
    return LevelAssessment(EvidenceLevel.OTHER, basis="library study kind")


def level_assessment(level: str, *, inferred: bool = False) -> LevelAssessment:
    """Return a stored level (code and inferred flag) as an assessment; unknown codes count as other."""
    valid = level if level in LEVEL_RANK else EvidenceLevel.OTHER
    return LevelAssessment(valid, inferred=inferred)
