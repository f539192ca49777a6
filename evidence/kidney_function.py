"""Kidney function in a question and in a finding, so a dose row is chosen for the patient asked about.

Guidelines and trials state drug choice and dose by kidney function ("at CrCl 15-30", "CKD G1-G4",
"eGFR 20 or more"); questions give it as a value ("eGFR 22") or a stage ("CKD4", "stage 4 CKD", "ESRD on
HD"). Both become ranges of mL/min (eGFR and creatinine clearance are read as one scale, as guidelines
tabulate them side by side); a finding whose stated ranges all miss the patient's is about other patients.
The stage bands are KDIGO's G categories.
"""

from __future__ import annotations

import math
import re

Range = tuple[float, float]

# KDIGO GFR categories (mL/min/1.73 m2).
STAGES: dict[str, Range] = {
    "1": (90, math.inf), "2": (60, 89), "3": (30, 59), "3a": (45, 59), "3b": (30, 44), "4": (15, 29), "5": (0, 14),
}
_MEASURE = r"(?:e?GFR|CrCl|creatinine clearance|CKD-EPI|(?:estimated )?glomerular filtration rate)"
_NUMBER = r"(\d+(?:\.\d+)?)"
_VALUE = re.compile(_MEASURE + r"\s*(?:of|was|is|=|:)?\s*(?:~|about\s+)?" + _NUMBER + r"(?!\s*[-\u2013]\s*\d)", re.I)
_STAGE = re.compile(
    r"\b(?:CKD|chronic kidney disease)\s*(?:stage\s*|G)?([1-5][ab]?)\b|\bstage\s*([1-5][ab]?)\s+(?:CKD|chronic kidney)"
    r"|\bCKD\s+G([1-5][ab]?)\b",
    re.I,
)
_FAILURE = re.compile(
    r"\b(?:ESRD|ESKD|end-stage (?:renal|kidney)|dialysis|haemodialysis|hemodialysis|on HD|on PD"
    r"|HD[- ](?:patients?|pts?))\b",
    re.I,
)
# In a finding: "CrCl 31-50", "G1-G4", "eGFR of 20 or more", "below CrCl 30", "<30 mL/min". A number counts only
# next to a kidney measure ("CrCl", "eGFR") or its unit, so "creatinine ≥1.5" and "age ≥80" are not ranges.
_NUM = r"(?<![\w.])(\d+(?:\.\d+)?)"
_SPAN = re.compile(_NUM + r"\s*(?:-|\u2013|to)\s*" + _NUM + r"\b")
_STAGE_SPAN = re.compile(r"\bG([1-5][ab]?)\s*(?:-|\u2013|to)\s*G?([1-5][ab]?)\b|\bG([1-5][ab]?)(?:/G?5D)?\b")
_AT_LEAST = re.compile(
    r"(?:≥|>=|\bover\s+|\babove\s+|\bat least\s+)\s*"
    + _NUM
    + r"|"
    + _NUM
    + r"(?=(?:\s*mL/min\S*(?:\s*m2)?)?\s+or (?:more|above|higher))"
)
_BELOW = re.compile(r"(?:<|\bbelow\s+|\bunder\s+|\bless than\s+)\s*(?:" + _MEASURE + r"\s*)?" + _NUM, re.I)
_NEAR_MEASURE = re.compile(_MEASURE + r"[^.;,()]{0,12}$", re.I)
_MEASURE_IN = re.compile(_MEASURE, re.I)
_UNIT = re.compile(r"^\s*mL/min", re.I)
_KIDNEY_WORDS = re.compile(_MEASURE + r"|\bCKD\b|\bkidney\b|\brenal\b|\bdialysis\b|\bG[1-5][ab]?\b", re.I)


def _measured(sentence: str, match: re.Match[str]) -> bool:
    """Return True when the number(s) matched stand next to a kidney measure or its unit."""
    before = sentence[max(0, match.start() - 30) : match.start()]
    after = sentence[match.end() :]
    return bool(_NEAR_MEASURE.search(before) or _MEASURE_IN.search(match.group(0)) or _UNIT.match(after))


def question_range(question: str) -> Range | None:
    """Return the patient's kidney function as a range of mL/min, or None when the question gives none."""
    if match := _VALUE.search(question):
        value = float(match.group(1))
        return (value, value)
    if match := _STAGE.search(question):
        stage = next(group for group in match.groups() if group).lower()
        return STAGES[stage]
    if _FAILURE.search(question):
        return STAGES["5"]
    return None


def finding_ranges(sentence: str) -> list[Range]:
    """Return the kidney-function ranges a finding is stated for (empty when it states none)."""
    if not _KIDNEY_WORDS.search(sentence):
        return []
    found: list[Range] = []
    for match in _SPAN.finditer(sentence):
        low, high = float(match.group(1)), float(match.group(2))
        if low < high <= 200 and _measured(sentence, match):
            found.append((low, high))
    for first, last, single in _STAGE_SPAN.findall(sentence):
        if single:
            found.append(STAGES[single.lower()])
        else:
            found.append((STAGES[last.lower()][0], STAGES[first.lower()][1]))
    for match in _AT_LEAST.finditer(sentence):
        if _measured(sentence, match):
            found.append((float(match.group(1) or match.group(2)), math.inf))
    for match in _BELOW.finditer(sentence):
        if _measured(sentence, match):
            found.append((0.0, float(match.group(1))))
    return [span for span in found if span[0] <= 200]


def fits(patient: Range | None, sentence: str) -> bool | None:
    """Return True when the finding covers the patient's kidney function, False when every range it states misses
    it, None when either says nothing about kidney function."""
    if patient is None:
        return None
    ranges = finding_ranges(sentence)
    if not ranges:
        return None
    low, high = patient
    return any(start <= high and low <= end for start, end in ranges)
