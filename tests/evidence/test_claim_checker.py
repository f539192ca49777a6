"""Which sentences of an answer are framing or page actions rather than claims the support check must judge."""

import pytest

from evidence.claims.checker import META


@pytest.mark.parametrize(
    ("sentence", "framing"),
    [
        ("Accept it to run the search in the Tablizer.", True),
        ("Dismiss the suggestion if the query is too broad.", True),
        ("The column is added below the table.", True),
        ("Here is a phase 3 search. ", True),
        ("Try this search.", True),
        ("Accept it to keep recruiting trials only.", True),
        ("What the evidence does not cover: dose.", True),
        # Advice about patients is a claim, however politely it starts.
        ("You may consider apixaban 2.5 mg twice daily [1].", False),
        ("I recommend adding metformin for this patient.", False),
        ("Try a lower dose of warfarin in the elderly.", False),
        ("Add a statin after the infarction.", False),
        ("This search narrows to phase 3 pembrolizumab trials.", True),
        # A finding put in the search's or column's mouth is still a claim.
        ("The search shows apixaban lowers stroke in CKD.", False),
        ("This column confirms that three trials reduced mortality.", False),
    ],
)
def test_only_framing_and_page_actions_escape_the_support_check(sentence, framing):
    assert bool(META.match(sentence)) is framing
