"""Direction and negation of a finding: does a claim say the same thing happened as its source?"""

from __future__ import annotations

import re
from dataclasses import dataclass

UP, DOWN = "increase", "decrease"

_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|cannot|fail(?:s|ed)?\s+to|unable\s+to|non-?significant(?:ly)?|"
    r"insignificant(?:ly)?|did\s*n[o']t|does\s*n[o']t|do\s*n[o']t|is\s*n[o']t|was\s*n[o']t|were\s*n[o']t|"
    r"are\s*n[o']t|could\s*n[o']t|lack(?:s|ed)?\s+of|absence\s+of)\b",
    re.IGNORECASE,
)
# Phrases that contain a negation word without negating the finding.
_NOT_NEGATION = re.compile(
    r"\b(?:not\s+only|whether\s+or\s+not|if\s+not|no\s+longer\s+than|no\s+more\s+than|no\s+less\s+than|"
    r"not\s+previously|not\s+yet|no\s+prior|no\s+history|no\s+evidence\s+of\s+(?:disease|recurrence))\b",
    re.IGNORECASE,
)
_DIRECTION = {
    UP: re.compile(
        r"\b(?:increas\w*|higher|high(?=\s+(?:risk|rates?|levels?))|rais(?:ed|es|ing)|elevat\w*|greater|more|"
        r"rises?|rose|risen|gain\w*|enhanc\w*|prolong\w*|longer|improv\w*|boost\w*|exceed\w*)\b",
        re.IGNORECASE,
    ),
    DOWN: re.compile(
        r"\b(?:reduc\w*|lower\w*|decreas\w*|less|fewer|declin\w*|drops?|dropped|diminish\w*|shorter|"
        r"attenuat\w*|fall|fell|cut|halved|worse\w*|impair\w*|shorten\w*)\b",
        re.IGNORECASE,
    ),
}


# A ratio measure says which way risk moved even when no direction word does ("recurred in 79% …
# (hazard ratio 18)" reports a higher risk): above 1 is up, below 1 is down.
_RATIO = re.compile(
    r"\b(?:hazard\s+ratio|odds\s+ratio|risk\s+ratio|relative\s+risk|rate\s+ratio|a?HR|a?OR|RR|IRR)\b"
    r"[\s,:=(]*(?:of|was|were|is|roughly|about|approximately|around|~|\u2248)*[\s,:=]*(?P<value>\d+(?:\.\d+)?)",
)


def _ratio_directions(text: str) -> set[str]:
    found = set()
    for match in _RATIO.finditer(text):
        value = float(match.group("value"))
        if value > 1.0:
            found.add(UP)
        elif 0 < value < 1.0:
            found.add(DOWN)
    return found


@dataclass(frozen=True)
class Polarity:
    """Whether a text negates its finding and which ways (increase/decrease) it says things moved."""

    negated: bool
    directions: frozenset[str]


def polarity_of(text: str) -> Polarity:
    """Return the negation and direction cues of `text`."""
    cleaned = _NOT_NEGATION.sub(" ", text)
    words = {name for name, pattern in _DIRECTION.items() if pattern.search(cleaned)}
    directions = frozenset(words or _ratio_directions(cleaned))
    return Polarity(negated=bool(_NEGATION.search(cleaned)), directions=directions)


def polarity_conflict(claim: str, support: str) -> str:
    """Return why `support` says the opposite of `claim` in words a clinician reads, or '' if they agree."""
    said, source = polarity_of(claim), polarity_of(support)
    if said.negated and not source.negated:
        return "the claim states a negative finding (no effect or difference) but the cited text reports one"
    if source.negated and not said.negated:
        return "the claim states a positive finding but the cited text reports no effect or difference"
    if len(said.directions) == 1 and len(source.directions) == 1 and said.directions != source.directions:
        (claimed,), (reported,) = said.directions, source.directions
        return f"the claim says it {claimed}d but the cited text says it {reported}d"
    return ""


def same_direction(claim: str, source: str) -> bool:
    """Return whether `claim` and `source` both state a direction and state the same one, negated alike."""
    said, reported = polarity_of(claim), polarity_of(source)
    return bool(said.directions) and said.directions == reported.directions and said.negated == reported.negated


def states_no_effect(text: str) -> bool:
    """Return whether `text` negates its finding ("did not reduce", "no significant difference")."""
    return polarity_of(text).negated
