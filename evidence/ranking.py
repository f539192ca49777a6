"""Rank candidate references by tag relevance and build the final reference list.

Relevance is 0-100 from tag overlap with the question's PICO:

- 90-100  the primary disease and the primary decision both match
- 70-89   the primary disease and some other decision match
- 50-69   the primary disease matches
- 20-49   only a secondary disease tag matches
- 0-9     no disease tag in common (a broader tag alone scores 5): excluded

Within a score, stronger curated evidence comes first, then the better retrieval match; between
items whose retrieval match is equal (to two decimals), the higher level of evidence comes first
(guideline, systematic review, RCT, cohort, case series, narrative review, other; `evidence.levels`).
The level only orders what was kept: which items are kept is decided before it is looked at, so it
never changes which evidence is admitted.

A study of the question's anchor pack that shares its primary disease scores at least 95: the
curators chose it as the evidence for exactly this scenario. A study the question names scores at least 50, whatever
its tags share with the question ("NOAH-AFNET 6 - stroke reduction?" has stroke, an outcome, as its only disease
tag): it is kept, and where it shares more it ranks as its tags say.

Secondary decision tags add a few points inside a band, so they break ties without ever lifting
an item into a higher band.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evidence.pico import Pico
from evidence.vocabulary import Vocabulary

MIN_RELEVANCE = 10
MIN_ITEMS = 6
MAX_ITEMS = 10
RELAX_BELOW = 5  # fewer relevant items than this: add 1-2 broader reviews
MAX_BROADER_REVIEWS = 2
MIN_PRIMARY_STUDIES = 2
BROADER_ONLY_SCORE = 5
ANCHOR_FLOOR = 95
NAMED_FLOOR = 50  # a study the question names: kept as if it shared the primary disease


@dataclass(frozen=True)
class Candidate:
    """Something that could be cited: a library study or a retrieved abstract."""

    key: str
    title: str
    disease_tags: frozenset[str]
    decision_tags: frozenset[str]
    is_primary_study: bool
    is_review: bool
    source: str  # "library" or "pubmed"
    year: int | None = None
    retrieval_score: float = 0.0
    strength: int = 0  # library evidence strength (3 high, 2 moderate, 1 low); 0 for abstracts
    is_anchor: bool = False
    level_rank: int = 0  # evidence.levels.LEVEL_RANK of the item's level of evidence (0: other or unknown)
    is_named: bool = False  # the question names the study ("NOAH-AFNET 6 - stroke reduction?")
    payload: Any = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Ranked:
    candidate: Candidate
    score: int
    band: str
    broader: bool = False


@dataclass(frozen=True)
class RankingResult:
    items: list[Ranked]
    excluded: list[Ranked]
    relaxed: bool

    def trace(self) -> dict[str, Any]:
        return {
            "kept": [
                {"key": r.candidate.key, "score": r.score, "band": r.band, "broader": r.broader} for r in self.items
            ],
            "excluded": [{"key": r.candidate.key, "score": r.score} for r in self.excluded],
            "relaxed": self.relaxed,
        }


def relevance(candidate: Candidate, pico: Pico, vocabulary: Vocabulary | None = None) -> Ranked:
    """Return the candidate's tag-relevance score for the question (see the module docstring)."""
    ranked = _tag_relevance(candidate, pico, vocabulary)
    if candidate.is_named and ranked.score < NAMED_FLOOR:
        # A study the question names is kept, whatever its tags share with the question's words.
        return Ranked(candidate, NAMED_FLOOR, "named in the question")
    return ranked


def _tag_relevance(candidate: Candidate, pico: Pico, vocabulary: Vocabulary | None) -> Ranked:
    # Modifiers (stage II, tissue-free assay) qualify a disease; sharing only a modifier is no overlap.
    diseases = set(pico.condition_tags)
    primary_disease, primary_decision = pico.primary_disease_tag, pico.primary_decision_tag
    secondary_decisions = set(pico.secondary_decision_tags)
    decision_overlap = candidate.decision_tags & set(pico.decision_tags)
    tie_break = min(len(candidate.decision_tags & secondary_decisions), 3)
    disease_overlap = candidate.disease_tags & diseases
    modifier_overlap = len(candidate.disease_tags & (set(pico.disease_tags) - diseases))

    if primary_disease and primary_disease in candidate.disease_tags:
        if primary_decision and primary_decision in candidate.decision_tags:
            score, band = 90 + min(3 * tie_break + min(len(disease_overlap) - 1, 1), 10), "primary disease + decision"
        elif decision_overlap:
            score, band = (
                70 + min(5 * tie_break + 2 * min(len(disease_overlap) - 1, 2), 19),
                "primary disease + decision",
            )
        else:
            score, band = 50 + min(5 * (len(disease_overlap) - 1) + 2 * modifier_overlap, 19), "primary disease"
    elif disease_overlap:
        score, band = 20 + min(8 * (len(disease_overlap) - 1) + 5 * len(decision_overlap), 29), "secondary disease"
    else:
        broader = set()
        if vocabulary is not None:
            for tag in diseases:
                broader.update(vocabulary.broader_chain(tag))
        if candidate.disease_tags & broader:
            return Ranked(candidate, BROADER_ONLY_SCORE, "broader disease only", broader=True)
        return Ranked(candidate, 0, "no disease overlap")
    if candidate.is_anchor and primary_disease in candidate.disease_tags and score < ANCHOR_FLOOR:
        score, band = ANCHOR_FLOOR, "anchor pack"
    return Ranked(candidate, min(score, 100), band)


def rank_references(
    candidates: Sequence[Candidate], *, pico: Pico, vocabulary: Vocabulary | None = None, max_items: int = MAX_ITEMS
) -> RankingResult:
    """Return the final reference list: the 6-10 most relevant items, excluding zero-overlap ones.

    Keeps at least two primary studies (trials, cohorts) when the relevant candidates include
    them. When fewer than five relevant items remain, the list is relaxed with up to two
    reviews or guidelines that share only a broader disease tag.
    """
    if not pico.condition_tags:
        # No recognised disease: tags cannot judge relevance, so retrieval order stands (nothing is
        # excluded for "zero overlap" with an empty tag set).
        neutral = [Ranked(c, 50, "no question tags") for c in _unique(candidates)]
        neutral.sort(key=lambda r: (r.candidate.retrieval_score, r.candidate.year or 0), reverse=True)
        shown = sorted(
            neutral[:max_items],
            key=lambda r: (round(r.candidate.retrieval_score, 2), r.candidate.level_rank, r.candidate.retrieval_score),
            reverse=True,
        )
        return RankingResult(items=shown, excluded=neutral[max_items:], relaxed=False)
    ranked = [relevance(candidate, pico, vocabulary) for candidate in _unique(candidates)]
    order = sorted(
        ranked,
        key=lambda r: (
            r.score,
            r.candidate.strength,
            r.candidate.retrieval_score,
            r.candidate.year or 0,
            r.candidate.key,
        ),
        reverse=True,
    )
    relevant = [r for r in order if r.score >= MIN_RELEVANCE]
    items = relevant[:max_items]

    primaries_in = [r for r in items if r.candidate.is_primary_study]
    primaries_out = [r for r in relevant[max_items:] if r.candidate.is_primary_study]
    while len(primaries_in) < MIN_PRIMARY_STUDIES and primaries_out:
        replaceable = [r for r in items if not r.candidate.is_primary_study]
        if not replaceable:
            break
        items.remove(replaceable[-1])
        promoted = primaries_out.pop(0)
        items.append(promoted)
        primaries_in.append(promoted)
    # Which items are kept is settled; the level of evidence only orders items of equal relevance.
    items.sort(key=_final_order, reverse=True)

    relaxed = False
    if len(items) < RELAX_BELOW:
        broader_reviews = [r for r in order if r.broader and r.candidate.is_review][:MAX_BROADER_REVIEWS]
        if broader_reviews:
            items.extend(broader_reviews)
            relaxed = True
    kept = {id(r) for r in items}
    return RankingResult(items=items, excluded=[r for r in order if id(r) not in kept], relaxed=relaxed)


def _final_order(ranked: Ranked) -> tuple[int, int, float, int, float]:
    """Return the sort key of a kept item: relevance, curated strength, then the level of evidence.

    Retrieval scores equal to two decimals count as equally relevant, so the level decides between them.
    """
    candidate = ranked.candidate
    return (
        ranked.score,
        candidate.strength,
        round(candidate.retrieval_score, 2),
        candidate.level_rank,
        candidate.retrieval_score,
    )


def _unique(candidates: Sequence[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    unique = []
    for candidate in candidates:
        if candidate.key not in seen:
            seen.add(candidate.key)
            unique.append(candidate)
    return unique
