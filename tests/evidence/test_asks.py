"""What a question asks for: a size of effect is not a dose."""

import pytest

from evidence.asks import asked_for


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What dose of apixaban in CKD4?", ["dose"]),
        ("how much apixaban at eGFR 22?", ["dose"]),
        ("apixaban in AF on dialysis - how much?", ["dose"]),
        ("how much should I give an 80 kg man?", ["dose"]),
        # How big an effect is, not how much drug to give.
        ("apixaban for subclinical AF - how much extra major bleeding vs aspirin?", []),
        ("How much does DAPT length matter for bleeding?", []),
    ],
)
def test_how_much_asks_for_a_dose_only_about_a_drug(question, asks):
    assert [kind for kind in asked_for(question) if kind == "dose"] == asks
