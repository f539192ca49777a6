"""The stage of the patient's disease in a question, and the stages a finding is stated for.

"Stage III colon ca, ctDNA+ after surgery" asks about stage III; a finding stated "in resected stage II colon
cancer" is about other patients, one stated "in stage II-III colorectal cancer" speaks to this one. Like
`evidence.durations` for episode length and `evidence.kidney_function` for kidney function, the composer uses
this to let the finding stated for the patient lead. Stages are read as numbers 1 to 4 from Roman or Arabic
numerals ("stage IIIB" is 3); a kidney stage ("CKD stage 4", "stage 3 CKD") is kidney function, not read here.
"""

from __future__ import annotations

import re

from evidence.text import roman_value

_NUMERAL = r"(?:IV|I{1,3}|[1-4])[ABC]?"
_STAGE = re.compile(
    rf"\bstages?\s+(?P<first>{_NUMERAL})"
    rf"(?P<rest>(?:\s*(?:-|\u2013|to|or|and|,|/)\s*(?:stage\s+)?{_NUMERAL})*)(?![\w-])",
    re.IGNORECASE,
)
_NEXT = re.compile(rf"(?:-|\u2013|to|or|and|,|/)\s*(?:stage\s+)?({_NUMERAL})", re.IGNORECASE)
_KIDNEY = re.compile(r"\b(?:CKD|kidney|renal|eGFR|GFR|CrCl)\b", re.IGNORECASE)
# "CKD4" spelled out for reading the patient is "chronic kidney disease stage 4": its stage is the kidney's.
_KIDNEY_DISEASE_BEFORE = re.compile(r"\bkidney disease\s*$", re.IGNORECASE)


def _number(numeral: str) -> int | None:
    bare = numeral.rstrip("ABCabc")
    return int(bare) if bare.isdigit() else roman_value(bare)


def _stages(match: re.Match[str]) -> set[int]:
    first = _number(match.group("first"))
    if first is None:
        return set()
    found = {first}
    previous = first
    for joint in _NEXT.finditer(match.group("rest")):
        value = _number(joint.group(1))
        if value is None:
            continue
        # "stage II-IV" and "stage II to IV" are ranges; "II or III", "II and III", "II, III" are lists.
        if joint.group(0).lstrip()[0] in "-\u2013t" and value > previous:
            found.update(range(previous, value + 1))
        found.add(value)
        previous = value
    return found


def _readings(text: str) -> list[set[int]]:
    readings = []
    for match in _STAGE.finditer(text):
        around = text[max(0, match.start() - 12) : match.end() + 12]
        if _KIDNEY.search(around) or _KIDNEY_DISEASE_BEFORE.search(text[: match.start()]):
            continue
        stages = _stages(match)
        if stages:
            readings.append(stages)
    return readings


def stage_spans(text: str) -> list[tuple[int, int]]:
    """Return where `text` names a disease stage ("stage IIIA", "stages II-III"): a detail, never a topic word."""
    return [match.span() for match in _STAGE.finditer(text)]


def question_stage(question: str) -> int | None:
    """Return the patient's stage (1 to 4) when the question names exactly one, else None."""
    found: set[int] = set().union(*_readings(question))
    return next(iter(found)) if len(found) == 1 else None


def fits(stage: int | None, sentence: str) -> bool | None:
    """Return True when `sentence` is stated for the patient's stage, False when only for other stages, None when
    the question gives no stage or the sentence states none."""
    if stage is None:
        return None
    readings = _readings(sentence)
    if not readings:
        return None
    return any(stage in stages for stages in readings)
