"""TrialScout's chat tray in Debian's headless Chromium: ask for a search, accept the card, see the form and results."""

from __future__ import annotations

import pytest

from tests.browser.pages import ask_in_tray, logged_in_page
from tests.research.conftest import (  # noqa: F401  (fixtures)
    MELANOMA_NCTS,
    melanoma_search,
)
from tests.trials.conftest import _ctgov_server, _no_real_ctgov, ctgov, ctgov_dir, recording  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def test_accepting_a_trial_search_card_fills_the_form_and_shows_results(
    live_server,
    session_cookie,
    melanoma_search,  # noqa: F811  (the fixture imported above)
    browser,
) -> None:
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/trialscout/")
    assert page.locator("#trial-results").count() == 0

    ask_in_tray(page, "phase 3 melanoma trials that are recruiting")

    card = page.locator("[data-payload-card=trial_search_suggestion]")
    card.wait_for()
    assert card.locator("dd").all_inner_texts() == ["melanoma", "Phase 3", "Recruiting"]
    assert page.locator("#tray-status").inner_text() == "Reply ready, with 1 suggestion."
    card.get_by_role("button", name="Accept").click()

    page.wait_for_url("**/trialscout/?condition=melanoma&phase=PHASE3&status=RECRUITING")
    assert page.get_by_label("Condition or disease").input_value() == "melanoma"
    assert page.get_by_label("Phase 3", exact=True).is_checked()
    assert not page.get_by_label("Phase 2", exact=True).is_checked()
    assert page.get_by_label("Recruiting", exact=True).is_checked()
    assert page.locator("#results-heading").inner_text() == "480 trials found"
    assert page.locator("#trial-results tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)") == (
        MELANOMA_NCTS
    )
    # The tray kept the conversation, and the card remembers it was accepted.
    assert page.locator("#tray-thread .chat-question").all_inner_texts() == [
        "phase 3 melanoma trials that are recruiting"
    ]
    assert page.locator("[data-payload-card] [data-payload-state]").inner_text() == "Accepted"
    request = [entry for entry, _ in melanoma_search.log][-1]
    assert request.args.get("query.cond") == "melanoma"
    assert request.args.get("filter.overallStatus") == "RECRUITING"
    assert request.args.get("filter.advanced") == "AREA[Phase]PHASE3"
