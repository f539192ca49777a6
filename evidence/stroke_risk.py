"""A stroke-risk score in a question and in a finding, so the recommendation stated for the patient's score leads.

Guidelines grade anticoagulation in AF by the CHA2DS2-VASc (or the sex-free CHA2DS2-VA) score, often for men and
women apart ("2 or more in men, 3 or more in women"; "1 in men, 2 in women"); questions give the patient's score and
often the sex ("CHA2DS2-VASc 1 in a 60M"). Like `evidence.kidney_function` for kidney function, a finding whose
stated scores all miss the patient's is about other patients. A trial's mean or median score describes its
patients, not a threshold, and is not read.
"""

from __future__ import annotations

import math
import re

Score = tuple[int, str | None]  # the patient's score and sex ("m", "f" or None)
Range = tuple[float, float, str | None]  # a finding's scores, for one sex or both (None)

_SCORE = r"CHA2DS2-VA(?:Sc)?"
_QUESTION = re.compile(_SCORE + r"\s*(?:score\s*)?(?:of|=|:|is|was)?\s*(\d)(?![.\d])", re.I)
_SEX = re.compile(
    r"\b\d{1,3}\s*(?:yo\s*|y/o\s*|-year-old\s*)?([MF])\b|\b((?i:men|man|males?|gentleman|women|woman|females?|lady))\b"
)
_FEMALE = {"f", "woman", "women", "female", "females", "lady"}
_STATED = re.compile(r"(?<!mean )(?<!median )" + _SCORE + r"([^;()]{0,60})", re.I)
# The scores right after the name: "of 2 or more in men, 3 or more in women", "is 3 or more", "≥2", "of 1 in men, 2 in
# women" (a number further on, "5 minutes", is no score). Groups: at least, the score, "or more", the sex.
_VALUE = (
    r"(≥|>=)?\s*(?<![\d.])(\d)(?![.,\d])(\s*(?:or (?:more|higher|above)|\+))?"
    r"(?:\s+in\s+(men|women|males|females))?"
)
_LEAD = r"^\s*(?:score\s*)?(?:of\s+|is\s+|was\s+|=\s*|:\s*|at least\s+)?"
_CHAIN = re.compile(_LEAD + _VALUE + r"(?:\s*(?:,|and|or)\s*" + _VALUE + ")*", re.I)
_VALUES = re.compile(_VALUE, re.I)


def question_score(question: str) -> Score | None:
    """Return the patient's CHA2DS2-VASc score and sex, or None when the question gives no score."""
    score = _QUESTION.search(question)
    if score is None:
        return None
    sex = _SEX.search(question)
    named = (sex.group(1) or sex.group(2)).lower() if sex else ""
    return int(score.group(1)), ("f" if named in _FEMALE else "m") if named else None


def finding_scores(sentence: str) -> list[Range]:
    """Return the CHA2DS2-VASc scores a finding is stated for (empty when it states none)."""
    found: list[Range] = []
    for stated in _STATED.finditer(sentence):
        chain = _CHAIN.match(stated.group(1))
        for at_least, value, more, sex in _VALUES.findall(chain.group(0) if chain else ""):
            low = float(value)
            found.append((low, math.inf if at_least or more else low, ("f" if sex.lower() in {"women", "females"}
                                                                        else "m") if sex else None))
    return found


def fits(patient: Score | None, sentence: str) -> bool | None:
    """Return True when the finding is stated for the patient's score, False when every score it states for the
    patient's sex misses it, None when either says nothing of the score.

    A threshold the patient's score is under ("only when CHA2DS2-VASc is 3 or more", for a score of 2) is the rule
    that decides for this patient too, not a finding for others: None.
    """
    if patient is None:
        return None
    score, sex = patient
    ranges = [(low, high) for low, high, stated in finding_scores(sentence) if sex is None or stated in (None, sex)]
    if not ranges:
        return None
    if any(low <= score <= high for low, high in ranges):
        return True
    return None if any(high == math.inf and score < low for low, high in ranges) else False
