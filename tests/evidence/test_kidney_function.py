"""Kidney function read from a question and from a finding, to choose the dose row for the patient asked about."""

import math

import pytest

from evidence.kidney_function import finding_ranges, fits, question_range


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("AF + CKD4 (eGFR 22), 78F - DOAC or warfarin?", (22.0, 22.0)),
        ("AF on apixaban, estimated glomerular filtration rate 28 - dose?", (28.0, 28.0)),
        ("apixaban dose, CrCl of 28?", (28.0, 28.0)),
        ("Which anticoagulant for AF and stage 4 chronic kidney disease?", (15, 29)),
        ("AF with CKD stage 3b", (30, 44)),
        ("HFpEF, CKD3b, T2DM", (30, 44)),
        ("AF and CKD G3a", (45, 59)),
        ("Is apixaban safe in ESRD on HD?", (0, 14)),
        # "HD patient" is on haemodialysis; "HD" alone may be something else.
        ("preferred anticoagulant in HD patient with AF", (0, 14)),
        ("high-dose HD therapy", None),
        ("Apixaban or warfarin in AF?", None),
        ("Stage 4 colon cancer: adjuvant chemotherapy?", None),
    ],
)
def test_the_question_gives_kidney_function_as_a_value_or_a_stage(question, expected):
    assert question_range(question) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("At CrCl 15-30, apixaban 2.5 mg twice daily could be considered.", [(15.0, 30.0)]),
        ("In AF with CKD G1-G4, use a NOAC.", [(15, math.inf)]),
        ("Give an SGLT2 inhibitor when eGFR is 20 mL/min/1.73 m2 or more.", [(20.0, math.inf)]),
        ("Major criteria include eGFR <30 mL/min.", [(0.0, 30.0)]),
        # Numbers next to other measures are not kidney function.
        ("In CKD, cut the dose if creatinine ≥1.5 mg/dL, age ≥80 or weight ≤60 kg.", []),
        ("In CKD the hazard ratio was 0.79 (95% CI 0.69-0.90).", []),
        ("Apixaban 5 mg twice daily (age 80-90 years).", []),
    ],
)
def test_a_finding_states_kidney_ranges_only_next_to_a_kidney_measure(sentence, expected):
    assert finding_ranges(sentence) == expected


def test_a_finding_fits_the_patient_when_one_of_its_ranges_covers_the_patients_kidney_function():
    assert fits((22.0, 22.0), "At CrCl 15-30, apixaban 2.5 mg twice daily could be considered.") is True
    assert fits((22.0, 22.0), "In AF with Cockcroft-Gault CrCl 31-50 mL/min, apixaban 5 mg twice daily.") is False
    assert fits((15, 29), "In AF with CKD G1-G4, use a NOAC instead of warfarin.") is True
    assert fits(None, "At CrCl 15-30, apixaban 2.5 mg.") is None
    assert fits((22.0, 22.0), "Apixaban lowered stroke versus aspirin (HR 0.63).") is None
