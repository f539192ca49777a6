"""What the patient does not have makes a finding for patients who have it a finding for other patients."""

from __future__ import annotations

import pytest

from evidence.absent_features import absent_features, fits
from evidence.matching import form_of
from evidence.patient import patient_details, stated_for_others

COMORBID = "For outpatients with CAP who have comorbidities, give amoxicillin/clavulanate plus a macrolide."
HEALTHY = "For previously healthy outpatients with CAP, prescribe amoxicillin 1 g three times daily."


@pytest.mark.parametrize(
    ("question", "absent"),
    [
        ("outpt CAP, no comorbidities - first-line abx?", ["comorbidities"]),
        ("AHRE 3 min on PPM interrogation, no AF hx - OAC?", ["AF"]),
        ("HFpEF + CKD3b, no known diabetes - SGLT2i?", ["diabetes"]),
        ("T2DM without prior stroke - aspirin?", ["stroke"]),
        # A result that was not found, or a benefit a trial did not show, is no feature of the patient.
        ("no benefit of ctDNA-guided therapy?", []),
        ("apixaban for SCAF in CKD4?", []),
    ],
)
def test_the_words_a_question_names_as_absent_are_read(question, absent):
    assert absent_features(question) == tuple(form_of(word) for word in absent)


@pytest.mark.parametrize(
    ("sentence", "fitted"),
    [
        (COMORBID, False),
        ("In patients with diabetes, SGLT2 inhibitors reduced hospitalisation.", None),
        (HEALTHY, None),
        # A treatment given is not a feature of the patient.
        ("Patients treated with comorbidities-adjusted dosing did better.", None),
    ],
)
def test_a_finding_for_patients_who_have_what_the_patient_lacks_is_for_others(sentence, fitted):
    assert fits(absent_features("outpt CAP, no comorbidities - first-line?"), sentence) is fitted


def test_a_recommendation_stated_in_a_condition_the_patient_lacks_is_for_others():
    # "AHRE 20 min on pacemaker check, CHA2DS2-VASc 2, no prior AF - start OAC?" opened with the AF recommendation.
    absent = absent_features("AHRE 20 min on pacemaker check, CHA2DS2-VASc 2, no prior AF - start OAC?")
    assert fits(absent, "In AF with an annual risk of 1-2% (CHA2DS2-VASc 1 in men, 2 in women), treat.") is False
    assert fits(absent, "In AF patients who are candidates for anticoagulation, choose a DOAC.") is False
    assert fits(absent, "For device-detected AHRE of 5 minutes to 24 hours, consider anticoagulation.") is None


def test_without_an_absent_feature_no_finding_is_judged_by_one():
    assert fits((), COMORBID) is None
    assert fits(absent_features("CAP outpt with COPD - first-line abx?"), COMORBID) is None


def test_the_patient_reading_carries_it_to_every_fit_check():
    details = patient_details("CAP, no comorbidities - first-line abx?")
    assert stated_for_others(details, [(COMORBID, "")])
    assert not stated_for_others(details, [(HEALTHY, ""), (COMORBID, "")])


def test_what_the_patient_lacks_is_no_topic_an_answer_must_cover():
    from evidence.absent_features import absent_spans

    question = "MSS stage II colon, no high-risk features, ctDNA neg - skip adjuvant?"
    assert [question[start:end] for start, end in absent_spans(question)] == ["no high-risk features"]
    question = "CAP in a 50M with no comorbidities, treated at home - amoxicillin?"
    assert [question[start:end] for start, end in absent_spans(question)] == ["no comorbidities"]


def test_a_noun_phrase_ends_at_punctuation_or_a_grammar_word_and_after_three_words():
    from evidence.absent_features import absent_spans

    def spans(question: str) -> list[str]:
        return [question[start:end] for start, end in absent_spans(question)]

    assert spans("no prior GI bleeding in the last year - DOAC?") == ["no prior GI bleeding"]
    assert spans("no MRSA risk factors at all, first-line?") == ["no MRSA risk factors"]
    assert spans("no AF hx - OAC?") == ["no AF hx"]
