"""Where a question's patient is treated, and where the patients of a finding were.

"CAP admitted to ICU - which abx?" asks about a patient in intensive care; a finding stated "for previously healthy
outpatients" is about other patients, and one stated "in severe CAP" speaks to this one. Like `evidence.stages` for
disease stage and `evidence.durations` for episode length, the composer uses this to let the finding stated for the
patient lead. The words are curators' data (`language.WordClass.OUTPATIENT`, `INPATIENT`, `CRITICAL_CARE`), read
through the word table's current reading.

Three settings, from least to most acute. Intensive care is a part of hospital care, so a question about a patient
in intensive care is not answered by a finding for outpatients, and reads a finding stated for hospitalised
patients without saying how ill they were as neither fitting nor not.
"""

from __future__ import annotations

from evidence import language

OUTPATIENT, INPATIENT, CRITICAL_CARE = "outpatient", "inpatient", "critical_care"
_CLASSES = (
    (CRITICAL_CARE, language.WordClass.CRITICAL_CARE),
    (INPATIENT, language.WordClass.INPATIENT),
    (OUTPATIENT, language.WordClass.OUTPATIENT),
)


def settings_in(text: str) -> frozenset[str]:
    """Return the care settings `text` names ("severe CAP" is intensive care, "hospitalised" in hospital)."""
    words = language.current()
    return frozenset(setting for setting, name in _CLASSES if words.pattern(name).search(text))


def question_setting(question: str) -> str | None:
    """Return where the question's patient is treated: the most acute setting it names, or None when it names
    none, or names care outside hospital together with care in it ("an outpatient, now admitted")."""
    found = settings_in(question)
    if OUTPATIENT in found and len(found) > 1:
        return None
    return next((setting for setting, _ in _CLASSES if setting in found), None)


def fits(setting: str | None, sentence: str) -> bool | None:
    """Return True when `sentence` is stated for the patient's care setting, False when only for another, None when
    the question names no setting or the sentence states none (or, for intensive care, only hospital care)."""
    if setting is None:
        return None
    stated = settings_in(sentence)
    if not stated:
        return None
    if setting == OUTPATIENT:
        return OUTPATIENT in stated
    if setting == INPATIENT:
        return bool(stated - {OUTPATIENT})
    return True if CRITICAL_CARE in stated else (None if INPATIENT in stated else False)
