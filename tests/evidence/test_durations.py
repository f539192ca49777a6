"""How long the patient's episodes lasted, and the durations a finding is stated for."""

import math

import pytest

from evidence.durations import finding_durations, fits, question_duration


@pytest.mark.parametrize(
    ("question", "duration"),
    [
        ("AHRE lasting 3 min on a loop recorder - OAC?", (3.0, 3.0)),
        ("two episodes, each lasting 2 to 4 minutes", (2.0, 4.0)),
        ("the longest about 4 hours, burden under 1%", (240.0, 240.0)),
        ("episodes of 90 s to 10 min", (1.5, 10.0)),
        ("atrial runs lasted 2 days", (2880.0, 2880.0)),
        # Written right after the episode, as on a device report.
        ("AHRE 3 min on PPM interrogation, CHA2DS2-VASc 4", (3.0, 3.0)),
        ("AHREs 2-4 min on the loop recorder", (2.0, 4.0)),
        ("an episode 2 days ago", None),
        # Walking the product: these were read as no duration, so the finding for episodes of 24 hours or longer led.
        ("atrial high-rate episodes up to 6 hours long, never AF on ECG", (360.0, 360.0)),
        ("8 h of AHRE on pacemaker interrogation, CHA2DS2-VASc 4", (480.0, 480.0)),
        ("episodes up to 3 days ago", None),
        # Time since something, or a treatment's length, is not how long an episode lasted.
        ("DES 3 days ago, 4 weeks post-op, on DAPT for 6 months", None),
    ],
)
def test_the_patients_episode_duration_is_read_only_as_how_long_it_lasted(question, duration):
    assert question_duration(question) == duration


def test_a_finding_is_stated_for_a_range_of_durations():
    assert finding_durations("Episodes shorter than 5 minutes do not warrant anticoagulation.") == [(0.0, 5.0)]
    assert finding_durations("Episodes lasting 5 minutes to 24 hours: may be reasonable.") == [(5.0, 1440.0)]
    assert finding_durations("An episode lasting 24 hours or longer makes it reasonable.") == [(1440.0, math.inf)]
    assert finding_durations("In patients with episodes of at least 6 minutes, edoxaban ...") == [(6.0, math.inf)]
    assert finding_durations("DAPT for 1 to 3 months (95% CI -5.8% to 8.0%)") == []


def test_fits_says_whether_a_finding_is_stated_for_the_patients_duration():
    short, long = (3.0, 3.0), (240.0, 240.0)
    below_five = "Episodes shorter than 5 minutes do not warrant oral anticoagulation."
    assert fits(short, below_five) is True
    assert fits(long, below_five) is False
    assert fits((2.0, 6.0), below_five) is False  # only partly inside: not stated for this patient
    assert fits(short, "Apixaban reduced stroke versus aspirin.") is None
    assert fits(None, below_five) is None
