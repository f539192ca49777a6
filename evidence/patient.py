"""What a question says of its patient that decides which finding fits, read once where the question is understood.

The patient's kidney function ("eGFR 22", "CKD4", "on HD"), the length of an episode ("AHRE 3 min"), the disease
stage ("stage III"), where the patient is treated ("admitted to ICU"), the stroke-risk score ("CHA2DS2-VASc 1 in a
60M") and the follow-up time asked about ("still holds at 5 yrs?") choose between findings stated for different
patients. The understanding step reads them, with the question's shorthand spelled out ("starts HD" is on dialysis),
into `AnswerRun.patient`; the composer chooses its lead with that reading, and the confidence rule caps the badge
when every shown finding is stated for other patients (`stated_for_others`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from evidence import absent_features, care_settings, durations, stages, stroke_risk
from evidence.asks import time_points
from evidence.kidney_function import Range, question_range


@dataclass(frozen=True)
class PatientDetails:
    kidney: Range | None = None  # kidney function in mL/min
    duration: durations.Range | None = None  # episode length
    stage: int | None = None  # disease stage
    setting: str | None = None  # care setting (`care_settings`: outpatient, inpatient, critical care)
    time_points: tuple[tuple[int, str], ...] = ()  # follow-up times asked about: (5, "year")
    risk_score: stroke_risk.Score | None = None  # CHA2DS2-VASc score and sex
    absent: tuple[tuple[str, ...], ...] = ()  # what the patient does not have ("no comorbidities"), as stem forms


def patient_details(question: str) -> PatientDetails:
    """Return what `question` says of its patient's kidney function, episode length, stage, care setting, stroke-risk
    score, follow-up time and what the patient does not have."""
    return PatientDetails(
        kidney=question_range(question),
        duration=durations.question_duration(question),
        stage=stages.question_stage(question),
        setting=care_settings.question_setting(question),
        time_points=tuple(time_points(question)),
        risk_score=stroke_risk.question_score(question),
        absent=absent_features.absent_features(question),
    )


def fitted(details: PatientDetails, sentence: str, population: str = "") -> tuple[bool | None, ...]:
    """Return, for the patient's episode length, disease stage, care setting, stroke-risk score and what the patient
    does not have in turn, whether `sentence` is stated for it (True), only for other patients (False), or the
    question or the sentence states none (None).

    What the sentence does not state, `population` may: the title of the study it comes from names whom the study
    enrolled ("... in patients with stage II colon cancer"), and a finding that names no stage is still about them.
    """
    checks: tuple[Callable[[str], bool | None], ...] = (
        partial(durations.fits, details.duration),
        partial(stages.fits, details.stage),
        partial(care_settings.fits, details.setting),
        partial(stroke_risk.fits, details.risk_score),
        partial(absent_features.fits, details.absent),
    )
    stated = [(fits, fits(sentence)) for fits in checks]
    return tuple(fits(population) if fit is None and population else fit for fits, fit in stated)


def stated_for_others(details: PatientDetails, sentences: Sequence[tuple[str, str]]) -> bool:
    """Return True when every one of `sentences` (each with the title of its study, as `fitted` reads them) is stated
    only for other patients than the question's: another disease stage, another episode length or another care
    setting ("stage II" for a stage III patient)."""

    def other(sentence: str, population: str) -> bool:
        found = fitted(details, sentence, population)
        return False in found and True not in found

    return bool(sentences) and all(other(sentence, population) for sentence, population in sentences)
