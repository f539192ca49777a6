"""Judge whether the evidence in hand is enough to answer, and whether to search PubMed live.

Score 0-100 with a level:

- excellent (≥85), good (≥70), limited (≥50), insufficient (<50)

Three or more anchor studies for the question's scenario guarantee at least 70. The live PubMed
search runs only when the score is below 50 *and* no anchor pack matched; when an anchor pack
matched but the score is still low, the remedy is to rerank with tags first, not to search. It also runs
when no admitted source speaks to the drug or procedure the question asks about, whatever the score. If
scoring itself fails, the verdict is "limited" and the live search is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import structlog

from evidence.ranking import Ranked

logger = structlog.get_logger(__name__)

ANCHOR_FLOOR_COUNT = 3
ANCHOR_FLOOR_SCORE = 70
EXTERNAL_SEARCH_BELOW = 50
DIRECT_SOURCES_SUFFICE = 2
LEVELS = ((85, "excellent"), (70, "good"), (50, "limited"), (0, "insufficient"))


@dataclass(frozen=True)
class Sufficiency:
    score: int
    level: str
    reasoning: str
    anchor_count: int
    direct_sources: int
    direct_syntheses: int
    matching_reviews: int
    matching_trials: int
    external_search: bool
    external_search_reason: str
    rerank_with_tags_first: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def level_for(score: int) -> str:
    return next(level for floor, level in LEVELS if score >= floor)


def score_sufficiency(
    *,
    anchor_count: int,
    ranked: Sequence[Ranked],
    direct_sources: int = 0,
    direct_syntheses: int = 0,
    direct_needed: int = DIRECT_SOURCES_SUFFICE,
    unaddressed: Sequence[str] = (),
) -> Sufficiency:
    """Return the sufficiency of the ranked evidence, given how many anchor studies matched, how many admitted
    sources (of them syntheses) address the question directly, and what the question asks about (the drug or
    procedure it names) that no admitted source speaks to - then the score does not suffice, and neither does an
    anchor pack: the pack is about the scenario ("antibiotics in CAP"), not what was asked ("steroids")."""
    relevant = [r for r in ranked if r.score >= 50]
    reviews = sum(1 for r in relevant if r.candidate.is_review)
    trials = sum(1 for r in relevant if r.candidate.is_primary_study)
    strongly_on_topic = sum(1 for r in ranked if r.score >= 90)
    score = min(
        100,
        15 * min(reviews, 2) + 12 * min(trials, 3) + 4 * min(len(relevant), 5) + 5 * min(strongly_on_topic, 3),
    )
    parts = [
        f"{len(relevant)} relevant item(s) (tag relevance ≥50): {reviews} guideline/review, {trials} primary stud(ies)"
    ]
    if anchor_count >= ANCHOR_FLOOR_COUNT:
        score = max(score, ANCHOR_FLOOR_SCORE + 5 * min(anchor_count - ANCHOR_FLOOR_COUNT, 3))
        parts.append(f"{anchor_count} anchor studies for the scenario guarantee at least {ANCHOR_FLOOR_SCORE}")
    elif anchor_count:
        parts.append(f"{anchor_count} anchor stud(ies) for the scenario")
    score = min(score, 100)

    if unaddressed:
        external, reason = True, f"no admitted source speaks to {', '.join(unaddressed)}"
    elif score >= EXTERNAL_SEARCH_BELOW:
        external, reason = False, f"score {score} ≥ {EXTERNAL_SEARCH_BELOW}: stored evidence suffices"
    elif anchor_count:
        external, reason = False, "an anchor pack matched: rerank with tags first instead of searching"
    elif direct_syntheses:
        reason = f"{direct_syntheses} review or guideline directly addresses the question: stored evidence suffices"
        external = False
    elif direct_sources >= direct_needed:
        external, reason = False, f"{direct_sources} sources directly address the question: stored evidence suffices"
    else:
        external, reason = True, f"score {score} < {EXTERNAL_SEARCH_BELOW} and no anchor pack matched"
    return Sufficiency(
        score=score,
        level=level_for(score),
        reasoning="; ".join(parts),
        anchor_count=anchor_count,
        direct_sources=direct_sources,
        direct_syntheses=direct_syntheses,
        matching_reviews=reviews,
        matching_trials=trials,
        external_search=external,
        external_search_reason=reason,
        rerank_with_tags_first=bool(anchor_count) and score < EXTERNAL_SEARCH_BELOW and not unaddressed,
    )


def safe_score_sufficiency(**arguments: Any) -> Sufficiency:
    """Return `score_sufficiency(**arguments)`, or on any failure "limited" with the external search allowed."""
    try:
        return score_sufficiency(**arguments)
    except Exception as exc:  # the answer must go on; the failure is logged and visible in the trace
        logger.exception("sufficiency_failed")
        return Sufficiency(
            score=50,
            level="limited",
            reasoning=f"sufficiency scoring failed ({type(exc).__name__}); treated as limited",
            anchor_count=int(arguments.get("anchor_count", 0)),
            direct_sources=int(arguments.get("direct_sources", 0)),
            direct_syntheses=int(arguments.get("direct_syntheses", 0)),
            matching_reviews=0,
            matching_trials=0,
            external_search=True,
            external_search_reason="scorer failed: external search allowed",
            rerank_with_tags_first=False,
        )
