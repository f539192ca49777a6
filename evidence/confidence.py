"""Confidence that means relevance and support: what the GREEN / YELLOW / RED badge promises.

- GREEN: at least two independent cited sources - or one guideline, systematic review or
  meta-analysis - directly address the question's condition and decision, and the shown claims
  are supported by what they cite.
- YELLOW: the answer rests on a single primary study, addresses the question only in part (the
  reasons say which part: a condition or decision no cited source covers, the drug or procedure a
  question about a condition names when no shown finding speaks to it, or the dose,
  duration, drug or threshold the question asks for and no cited source states; or every shown finding is stated
  only for other patients - another disease stage or episode length), or lost claims to verification.
- RED: nothing cited addresses the question (the answer abstains).

The citation-format rating (cited documents and citation density) stays as a floor: an answer
with no valid citation is never above RED, whatever the evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

GREEN, YELLOW, RED = "GREEN", "YELLOW", "RED"
_ORDER = {RED: 0, YELLOW: 1, GREEN: 2}
# An answer that lost more than this share of its claims to verification is never GREEN.
MAX_REMOVED_SHARE_FOR_GREEN = 0.25


@dataclass(frozen=True)
class SourceVerdict:
    """What the judge step decided about one cited source."""

    doc_id: str
    title: str
    addresses: bool
    direct: bool
    synthesis: bool
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class Confidence:
    level: str
    reasons: list[str]


def rate_confidence(
    *,
    cited: Sequence[SourceVerdict],
    format_floor: str,
    abstained: bool,
    claims_shown: int = 0,
    claims_removed: int = 0,
    unstated: Sequence[str] = (),
    unanswered: Sequence[str] = (),
    other_patients: bool = False,
) -> Confidence:
    """Return the badge for an answer citing `cited`, with the reasons a clinician reads beside it."""
    if abstained:
        return Confidence(RED, ["the answer abstains: no admitted evidence addresses the question"])
    on_topic = [source for source in cited if source.addresses]
    if not on_topic:
        return Confidence(RED, ["none of the cited sources addresses the question"])
    direct = [source for source in on_topic if source.direct]
    reasons: list[str] = []
    if unanswered:
        # The sources are about the question's condition, but no shown finding speaks to what it asks about.
        level = YELLOW
        reasons.append(
            "the cited evidence addresses the question only in part: no shown finding speaks to "
            + ", ".join(unanswered)
        )
    elif len(direct) >= 2:
        level = GREEN
        reasons.append(f"{len(direct)} independent sources directly address the question's condition and decision")
    elif any(source.synthesis for source in direct):
        level = GREEN
        synthesis = next(source for source in direct if source.synthesis)
        reasons.append(f"a guideline or evidence synthesis ({synthesis.title}) directly addresses the question")
    else:
        level = YELLOW
        if direct:
            reasons.append(f"a single primary study ({direct[0].title}) directly addresses the question")
        else:
            gaps = _common_gaps(on_topic)
            # No part is missed by all of them: each covers some of the question and none all of it (one part missed
            # by some is covered by another: none addresses the question directly).
            partial = list(dict.fromkeys(label for source in on_topic for label in source.missing))
            partial = partial if len(partial) > 1 else []
            reasons.append(
                "the cited evidence addresses the question only in part"
                + (f": it does not cover {', '.join(gaps)}" if gaps else "")
                + (f": no cited source covers all of {', '.join(partial)}" if partial and not gaps else "")
                + ("" if gaps or partial else ": no cited source addresses it directly")
            )
    if other_patients and level == GREEN:
        level = YELLOW
        reasons.append("the shown findings are stated for other patients (another stage or episode length)")
    if unstated and level == GREEN:
        level = YELLOW
        reasons.append(f"the question asks for {' and '.join(unstated)}, which the cited evidence does not state")
    total = claims_shown + claims_removed
    if total and claims_removed / total > MAX_REMOVED_SHARE_FOR_GREEN and level == GREEN:
        level = YELLOW
        reasons.append(f"{claims_removed} of {total} statements were removed as unsupported")
    if _ORDER[format_floor] < _ORDER[level]:
        level = format_floor
        if format_floor != YELLOW:
            reasons.append("no valid citation")
        elif len(cited) < 2:
            # The citation floor holds an answer resting on one source below GREEN, guideline or not.
            reasons.append("the answer rests on a single cited source")
        else:
            reasons.append("few of the answer's statements carry a citation")
    return Confidence(level, reasons)


def _common_gaps(sources: Sequence[SourceVerdict]) -> list[str]:
    """Return the question's essential concepts that none of `sources` covers."""
    gaps = [set(source.missing) for source in sources]
    common = set.intersection(*gaps) if gaps else set()
    return [label for label in sources[0].missing if label in common]
