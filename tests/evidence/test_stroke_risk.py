"""The CHA2DS2-VASc score a question gives and the scores a finding is stated for."""

import math

import pytest

from evidence.stroke_risk import finding_scores, fits, question_score


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("CHA2DS2-VASc 1 in a 60M with AF - anticoagulate?", (1, "m")),
        ("72F AF, CHA2DS2-VASc 3 - DOAC or warfarin?", (3, "f")),
        ("woman with AF, CHA2DS2-VA score of 2 - OAC?", (2, "f")),
        ("Woman, 70, AF, CHA2DS2-VASc 2 - OAC?", (2, "f")),  # the word read in any case
        ("CHA2DS2-VASc 1 in men with AF - OAC?", (1, "m")),
        ("SCAF episodes 2-6 h, CHA2DS2-VASc 3 - apixaban vs aspirin?", (3, None)),
        ("CHA2DS2-VASc 3.5?", None),  # no score is a fraction
        ("Which DOAC in AF?", None),
    ],
)
def test_the_question_gives_the_score_and_the_sex(question, expected):
    assert question_score(question) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "Anticoagulate AF at an annual risk of 2% or more (CHA2DS2-VASc of 2 or more in men, 3 or more in women).",
            [(2.0, math.inf, "m"), (3.0, math.inf, "f")],
        ),
        ("At 1% to under 2% (CHA2DS2-VASc of 1 in men, 2 in women) it is reasonable.", [(1, 1, "m"), (2, 2, "f")]),
        ("It may be reasonable only when CHA2DS2-VASc is 3 or more (or equivalent risk).", [(3, math.inf, None)]),
        ("With a CHA2DS2-VASc score ≥2 plus 5 minutes of AHRE, consider it.", [(2, math.inf, None)]),
        # A trial's mean score describes its patients; a score named without one states nothing.
        ("In 4,012 patients (mean age 76.8 years, mean CHA2DS2-VASc 3.9), apixaban reduced stroke.", []),
        ("Judge that risk with the simplified CHA2DS2-VA score.", []),
    ],
)
def test_a_finding_states_the_scores_it_is_for_and_for_whom(sentence, expected):
    assert finding_scores(sentence) == expected


def test_a_finding_fits_the_patients_score_for_the_patients_sex():
    both = "Anticoagulate (CHA2DS2-VASc of 2 or more in men, 3 or more in women)."
    intermediate = "Anticoagulation is reasonable (CHA2DS2-VASc of 1 in men, 2 in women)."
    # Under a threshold ("2 or more"), the threshold is the rule that decides for this patient too: not a misfit.
    assert (fits((1, "m"), both), fits((1, "m"), intermediate)) == (None, True)
    assert (fits((2, "f"), both), fits((2, "f"), intermediate)) == (None, True)
    assert (fits((3, "f"), both), fits((3, "f"), intermediate)) == (True, False)
    # AHRE of 20 minutes with a score of 2: "only when 3 or more" answers it (no); a row for exact scores does not.
    ahre = "For AHRE of 5 minutes to 24 hours, anticoagulation may be reasonable only when CHA2DS2-VASc is 3 or more."
    assert fits((2, None), ahre) is None and fits((4, "m"), intermediate) is False
    assert fits((2, None), both) is True  # sex not given: a score stated for either sex fits
    assert fits(None, both) is None and fits((2, "m"), "Give a DOAC rather than warfarin.") is None
