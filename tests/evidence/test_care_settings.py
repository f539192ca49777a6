"""Where the question's patient is treated and where a finding's patients were (evidence.care_settings)."""

from __future__ import annotations

import pytest

from evidence import language
from evidence.care_settings import CRITICAL_CARE, INPATIENT, OUTPATIENT, fits, question_setting, settings_in
from evidence.models import Word, WordClass


@pytest.mark.parametrize(
    ("question", "setting"),
    [
        ("CAP admitted to ICU - which abx?", CRITICAL_CARE),
        ("severe CAP, on norepinephrine - antibiotics?", CRITICAL_CARE),
        ("hospitalized CAP, which antibiotics?", INPATIENT),
        ("outpt CAP, PCN allergy - doxy or azithro?", OUTPATIENT),
        # Care outside hospital named with care in it: no single setting.
        ("CURB-65 of 2, outpt or admit, and which abx?", None),
        ("CAP - which abx?", None),
        # "non-severe" is not severe.
        ("non-severe CAP, which antibiotics?", None),
    ],
)
def test_the_patients_care_setting_is_read_from_the_question(question, setting) -> None:
    assert question_setting(question) == setting


@pytest.mark.parametrize(
    ("setting", "sentence", "fitted"),
    [
        (CRITICAL_CARE, "For previously healthy outpatients with CAP, prescribe amoxicillin.", False),
        (CRITICAL_CARE, "In hospitalised non-severe CAP give a beta-lactam; in severe CAP, add a macrolide.", True),
        # Hospital care without a word of how ill: neither for the ICU patient nor against.
        (CRITICAL_CARE, "In hospitalised non-severe CAP, give a beta-lactam plus a macrolide.", None),
        (INPATIENT, "In hospitalised non-severe CAP, give a beta-lactam plus a macrolide.", True),
        (INPATIENT, "For previously healthy outpatients with CAP, prescribe amoxicillin.", False),
        (OUTPATIENT, "For previously healthy outpatients with CAP, prescribe amoxicillin.", True),
        (OUTPATIENT, "In severe CAP, a beta-lactam plus a macrolide.", False),
        (OUTPATIENT, "Continue therapy for at least 5 days.", None),
        (None, "For previously healthy outpatients with CAP, prescribe amoxicillin.", None),
    ],
)
def test_a_finding_fits_the_patients_care_setting_when_stated_for_it(setting, sentence, fitted) -> None:
    assert fits(setting, sentence) is fitted


def test_care_setting_words_are_curated_rows(db) -> None:
    # A curator adds a way of writing a setting; it applies from the next reading, and removing it stops it.
    try:
        language.refresh()
        assert settings_in("a patient in the emergency ward") == frozenset()
        Word.objects.create(text="emergency ward", classes=[WordClass.INPATIENT])
        language.refresh()
        assert settings_in("a patient in the emergency ward") == {INPATIENT}
        Word.objects.filter(text="emergency ward").delete()
        language.refresh()
        assert settings_in("a patient in the emergency ward") == frozenset()
    finally:
        Word.objects.all().delete()
        language.refresh()
