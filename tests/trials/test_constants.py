"""The one reader of a trial phase number, shared by the tray's rules, its payloads and its row filters."""

import pytest

from trials.constants import PHASES, phase_code


@pytest.mark.parametrize(
    ("number", "early", "code"),
    [
        ("3", False, "PHASE3"),
        ("III", False, "PHASE3"),
        ("iv", False, "PHASE4"),
        ("1", True, "EARLY_PHASE1"),
        ("i", True, "EARLY_PHASE1"),
        ("2", True, "PHASE2"),  # no early phase 2 exists
        ("5", False, None),
        ("V", False, None),
        ("x", False, None),
    ],
)
def test_a_phase_number_in_digits_or_roman_numerals_is_the_registrys_phase(number, early, code):
    assert phase_code(number, early=early) == code
    assert code is None or code in PHASES
