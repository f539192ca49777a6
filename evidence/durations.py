"""How long an episode lasted, in a question and in a finding, so the finding stated for the patient's leads.

Guidelines state some recommendations by how long device-detected episodes last ("shorter than 5 minutes",
"5 minutes to 24 hours", "24 hours or longer"); a question gives the patient's ("AHRE lasting 3 min", "each
lasting 2 to 4 minutes", "the longest about 4 hours"). Both become ranges of minutes, as
`evidence.kidney_function` does for kidney function. A number is read only with a unit of time, and in a
question only as how long something lasted (not "3 days ago" or "4 weeks post-op").
"""

from __future__ import annotations

import math
import re

Range = tuple[float, float]

_MINUTES = {"s": 1 / 60, "m": 1.0, "h": 60.0, "d": 1440.0, "w": 10080.0}
_UNIT = r"(sec(?:ond)?s?|s|min(?:ute)?s?|h(?:ou)?rs?|h|days?|weeks?|wks?)\b"
_N = r"(\d+(?:\.\d+)?)"
_TO = r"\s*(?:-|\u2013|to)\s*"
# An amount or a range of time: "3 min", "2 to 4 minutes", "90 s to 10 min".
_AMOUNT_OR_RANGE = _N + r"(?:\s*" + _UNIT + r")?(?:" + _TO + _N + r")?\s*" + _UNIT
# The patient's: "lasting 3 min", "each lasting 2 to 4 minutes", "the longest about 4 hours", "episodes of 6 h".
_ABOUT = r"(?:about\s+|around\s+|up to\s+|~\s*)?"
_LASTED = re.compile(
    r"\b(?:lasting|lasted|lasts|longest|episodes? of)\s+" + _ABOUT + _AMOUNT_OR_RANGE,
    re.IGNORECASE,
)
# Written next to the episode, as on a device report: "AHRE 3 min", "AHREs 2-4 min", "episodes up to 6 hours long"
# (not "2 days ago"), or before it: "8 h of AHRE".
_EPISODE = re.compile(
    r"\b(?:AHREs?|episodes?|runs?)\s+" + _ABOUT + _AMOUNT_OR_RANGE
    + r"(?!\s+(?:ago|post|after|before|later))",
    re.IGNORECASE,
)
_BEFORE_EPISODE = re.compile(_AMOUNT_OR_RANGE + r"\s+of\s+(?:AHREs?|atrial high[- ]rate)", re.IGNORECASE)
# Any amount of time ("3 min", "4 wks"): a detail of the patient, never a topic word.
_AMOUNT = re.compile(_N + r"\s*" + _UNIT, re.IGNORECASE)
# A finding's: "6 minutes to 24 hours", "5 to 30 minutes", "shorter than 5 minutes", "24 hours or longer".
_SPAN = re.compile(_N + r"\s*" + _UNIT + _TO + _N + r"\s*" + _UNIT + r"|" + _N + _TO + _N + r"\s*" + _UNIT, re.I)
_BELOW = re.compile(r"(?:\bshorter than|\bless than|\bunder|<)\s*" + _N + r"\s*" + _UNIT, re.IGNORECASE)
_ABOVE = re.compile(
    r"(?:\blonger than|\bat least|\bmore than|≥|>=|>)\s*" + _N + r"\s*" + _UNIT
    + r"|" + _N + r"\s*" + _UNIT + r"\s+or (?:longer|more)",
    re.IGNORECASE,
)


def _minutes(number: str, unit: str) -> float:
    return float(number) * _MINUTES[unit.lower()[0]]


def question_duration(question: str) -> Range | None:
    """Return how long the patient's episodes lasted, in minutes, or None when the question does not say."""
    match = _LASTED.search(question) or _EPISODE.search(question) or _BEFORE_EPISODE.search(question)
    if match is None:
        return None
    first, first_unit, second, unit = match.groups()
    low = _minutes(first, first_unit or unit)
    return (low, _minutes(second, unit)) if second else (low, low)


def amount_spans(text: str) -> list[tuple[int, int]]:
    """Return where `text` gives an amount of time ("3 min", "4 weeks")."""
    return [match.span() for match in _AMOUNT.finditer(text)]


def finding_durations(sentence: str) -> list[Range]:
    """Return the ranges of episode duration, in minutes, that a finding is stated for (empty when none)."""
    found: list[Range] = []
    for match in _SPAN.finditer(sentence):
        low, low_unit, high, high_unit, plain_low, plain_high, plain_unit = match.groups()
        if low is not None:
            found.append((_minutes(low, low_unit), _minutes(high, high_unit)))
        else:
            found.append((_minutes(plain_low, plain_unit), _minutes(plain_high, plain_unit)))
    found += [(0.0, _minutes(number, unit)) for number, unit in _BELOW.findall(sentence)]
    for match in _ABOVE.finditer(sentence):
        number, unit = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        found.append((_minutes(number, unit), math.inf))
    return [(low, high) for low, high in found if low < high]


def fits(duration: Range | None, sentence: str) -> bool | None:
    """Return True when `sentence` is stated for the patient's episode duration, False when it is stated only for
    others, None when the question gives none or the sentence states none."""
    if duration is None:
        return None
    ranges = finding_durations(sentence)
    if not ranges:
        return None
    return any(low <= duration[0] and duration[1] <= high for low, high in ranges)
