"""TrialScout's chat tray in Debian's headless Chromium: ask for a search, accept the card, see the form and results."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client

from evidence.models import Tag
from tests.factories import UserFactory
from tests.research.conftest import (  # noqa: F401  (fixtures)
    MELANOMA_NCTS,
    melanoma_search,
)
from tests.trials.conftest import _ctgov_server, _no_real_ctgov, ctgov, ctgov_dir, recording  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def researcher(transactional_db):
    Tag.objects.create(
        code="melanoma", kind="disease", label="melanoma", synonyms=["melanoma"], mesh_terms=["Melanoma"]
    )
    return UserFactory(username="dr-scout")


@pytest.fixture
def browser() -> Iterator[object]:
    """Chromium; request it last (after database rows), as in tests/browser/test_chat_browser.py."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (make browser)")
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def session_cookie(researcher) -> str:
    """Log the researcher in (before the browser starts: no ORM calls in Playwright's thread) and return the cookie."""
    client = Client()
    client.force_login(researcher)
    return client.cookies[django_settings.SESSION_COOKIE_NAME].value


def logged_in_page(browser, live_server, cookie: str):
    context = browser.new_context()
    context.add_cookies([{"name": django_settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(10000)
    return page


def ask_in_tray(page, question: str) -> None:
    """Type a question into the page's chat tray and send it."""
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()


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
