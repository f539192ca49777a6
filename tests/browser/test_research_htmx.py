"""The research pages' htmx interactions in Debian's headless Chromium: each updates the page in place.

Dismissing a card, "Load more" on TrialScout and on the Tablizer: the page is never reloaded (a flag set
on `window` survives), and what changed is exactly what the server's partial says.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from tests.browser.test_research_tablizer import PMIDS, QUERY
from tests.browser.test_research_trialscout import browser, logged_in_page, researcher, session_cookie  # noqa: F401
from tests.chat.conftest import _eutils_server, esearch_for, eutils, eutils_recording  # noqa: F401
from tests.research.conftest import abstracts, esearch_serving, melanoma_search  # noqa: F401
from tests.research.test_views import TRIAL_SEARCH, suggestion_message
from tests.trials.conftest import _ctgov_server, _no_real_ctgov, ctgov, ctgov_dir, recording  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHELAN_TOKEN = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw"
PHELAN_TOKEN_2 = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4bmjeauvk_IQ"
MARK = "window.__sameDocument = true"
SAME_DOCUMENT = "window.__sameDocument === true"


@pytest.fixture
def phelan_pages(ctgov: HTTPServer, recording: Callable[[str], bytes], settings) -> HTTPServer:  # noqa: F811
    """Serve the recorded Phelan-McDermid search five trials a page: page 1, page 2, then a last page."""
    settings.CTGOV_PAGE_SIZE = 5
    pages = {
        None: recording("biomcp/search_phelan_limit5_20260811.json"),
        PHELAN_TOKEN: recording("biomcp/search_phelan_next_20260811.json"),
        PHELAN_TOKEN_2: recording("biomcp/search_phelan_limit50_20260811.json"),
    }
    ctgov.expect_request("/api/v2/studies").respond_with_handler(
        lambda request: Response(pages[request.args.get("pageToken")], content_type="application/json")
    )
    return ctgov


def test_trialscout_load_more_appends_the_next_rows_in_place(
    live_server,
    session_cookie,  # noqa: F811
    phelan_pages,
    browser,  # noqa: F811
) -> None:
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/trialscout/?condition=Phelan-McDermid+Syndrome")
    page.evaluate(MARK)
    rows = page.locator("#trial-results tbody tr")
    first_five = rows.evaluate_all("rows => rows.map(r => r.dataset.item)")
    assert len(first_five) == 5

    page.get_by_role("link", name="Load more trials").click()
    page.wait_for_function("document.querySelectorAll('#trial-results tbody tr').length === 10")

    assert page.evaluate(SAME_DOCUMENT)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.item)") == [
        *first_five, "NCT05187377", "NCT03836300", "NCT07014020", "NCT05025241", "NCT07281079"
    ]
    assert page.locator("#trial-results-status").inner_text() == "5 more trials loaded, 10 shown."
    page.wait_for_function("document.activeElement && document.activeElement.textContent === 'NCT05187377'")
    # Every form on the page (tray, AI columns) now posts a state that includes the appended page.
    states = page.locator("input[data-page-state]").evaluate_all("inputs => inputs.map(i => i.value)")
    assert len(states) >= 2 and len(set(states)) == 1
    assert states[0].endswith(f"&more={PHELAN_TOKEN}")
    assert PHELAN_TOKEN_2 in page.locator("a[data-load-more]").get_attribute("href")

    page.get_by_role("link", name="Load more trials").click()
    page.locator("#trial-load-more", has_text="End of results.").wait_for()
    assert page.evaluate(SAME_DOCUMENT)
    assert rows.count() > 10
    assert page.locator("a[data-load-more]").count() == 0
    tokens = [request.args.get("pageToken") for request, _ in phelan_pages.log]
    assert tokens[-2:] == [PHELAN_TOKEN, PHELAN_TOKEN_2]


def test_tablizer_load_more_shows_the_longer_table_in_place(
    live_server,
    session_cookie,  # noqa: F811
    abstracts,  # noqa: F811
    esearch_serving,  # noqa: F811
    browser,  # noqa: F811
) -> None:
    esearch_serving(PMIDS)
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/tablizer/?q={QUERY}&n=2")
    page.evaluate(MARK)
    rows = page.locator("#results tbody tr")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.item)") == PMIDS[:2]

    page.get_by_role("link", name="Load more").click()
    page.wait_for_function("document.querySelectorAll('#results tbody tr').length === 5")

    assert page.evaluate(SAME_DOCUMENT)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.item)") == PMIDS
    assert page.locator(".tablizer-summary").inner_text().startswith("5 results in PubMed; showing 5.")
    assert "n=22" in page.url  # the address bar still reloads what is shown
    page.wait_for_function(f"document.activeElement && document.activeElement.textContent.startsWith('{PMIDS[2]}')")
    assert page.get_by_role("link", name="Load more").count() == 0
    states = page.locator("input[data-page-state]").evaluate_all("inputs => inputs.map(i => i.value)")
    assert len(set(states)) == 1 and "n=22" in states[0]


@pytest.fixture
def card_message(researcher):  # noqa: F811
    """A tray reply with one pending trial-search card (made before the browser starts: no ORM in its thread)."""
    return suggestion_message(researcher, ("trial_search_suggestion", TRIAL_SEARCH))


def test_dismiss_updates_the_card_in_place_and_a_stale_tab_is_told_why_not(
    live_server,
    card_message,
    session_cookie,  # noqa: F811
    melanoma_search,  # noqa: F811
    browser,  # noqa: F811
) -> None:
    message = card_message
    url = f"{live_server.url}/trialscout/?condition=melanoma&conversation={message.conversation_id}"
    page = logged_in_page(browser, live_server, session_cookie)
    stale = logged_in_page(browser, live_server, session_cookie)
    page.goto(url)
    stale.goto(url)
    page.evaluate(MARK)
    card = page.locator("[data-payload-card=trial_search_suggestion]")

    card.get_by_role("button", name="Dismiss").click()
    card.locator("[data-payload-state]").wait_for()

    assert page.evaluate(SAME_DOCUMENT)
    assert page.url == url
    assert card.locator("[data-payload-state]").inner_text() == "Dismissed"
    assert "state-dismissed" in card.get_attribute("class")
    assert card.get_by_role("button").count() == 0
    assert page.locator("#tray-status").inner_text() == "Suggestion dismissed."

    # The other tab still offers the card; accepting it now is refused, and the card says why.
    stale.evaluate(MARK)
    stale_card = stale.locator("[data-payload-card=trial_search_suggestion]")
    stale_card.get_by_role("button", name="Accept").click()
    stale_card.locator(".payload-error").wait_for()
    assert stale.evaluate(SAME_DOCUMENT)
    assert stale_card.locator(".payload-error").inner_text() == (
        "This suggestion was already dismissed; it cannot be decided again."
    )
    assert stale_card.locator("[data-payload-state]").inner_text() == "Dismissed"
    assert stale.url == url
