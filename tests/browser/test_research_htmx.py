"""The research pages' htmx interactions in Debian's headless Chromium: each updates the page in place.

Dismissing a card, "Load more" on TrialScout and on the Tablizer: the page is never reloaded (a flag set
on `window` survives), and what changed is exactly what the server's partial says.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from tests.browser.pages import PMIDS, QUERY, ask_in_tray, logged_in_page
from tests.chat.conftest import _eutils_server, _llm_server, esearch_for, eutils, eutils_recording  # noqa: F401
from tests.research.conftest import abstracts, esearch_serving, melanoma_search, research_llm  # noqa: F401
from tests.research.fakes import record_id
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
    session_cookie,
    phelan_pages,
    browser,
) -> None:
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/trialscout/?condition=Phelan-McDermid+Syndrome")
    page.evaluate(MARK)
    rows = page.locator("#trial-results tbody tr")
    first_five = rows.evaluate_all("rows => rows.map(r => r.dataset.item)")
    assert len(first_five) == 5

    page.get_by_role("link", name="Load more trials").click()
    page.wait_for_function("() => document.querySelectorAll('#trial-results tbody tr').length === 10")

    assert page.evaluate(SAME_DOCUMENT)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.item)") == [
        *first_five, "NCT05187377", "NCT03836300", "NCT07014020", "NCT05025241", "NCT07281079"
    ]
    assert page.locator("#trial-results-status").inner_text() == "5 more trials loaded, 10 shown."
    page.wait_for_function("() => document.activeElement && document.activeElement.textContent === 'NCT05187377'")
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
    session_cookie,
    abstracts,  # noqa: F811
    esearch_serving,  # noqa: F811
    browser,
) -> None:
    esearch_serving(PMIDS)
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/tablizer/?q={QUERY}&n=2")
    page.evaluate(MARK)
    rows = page.locator("#results tbody tr")
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.item)") == PMIDS[:2]

    page.get_by_role("link", name="Load more").click()
    page.wait_for_function("() => document.querySelectorAll('#results tbody tr').length === 5")

    assert page.evaluate(SAME_DOCUMENT)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.item)") == PMIDS
    assert page.locator(".tablizer-summary").inner_text().startswith("5 results in PubMed; showing 5.")
    assert "n=22" in page.url  # the address bar still reloads what is shown
    page.wait_for_function(
        f"() => document.activeElement && document.activeElement.textContent.startsWith('{PMIDS[2]}')"
    )
    assert page.get_by_role("link", name="Load more").count() == 0
    states = page.locator("input[data-page-state]").evaluate_all("inputs => inputs.map(i => i.value)")
    assert len(set(states)) == 1 and "n=22" in states[0]


@pytest.fixture
def card_message(researcher):
    """A tray reply with one pending trial-search card (made before the browser starts: no ORM in its thread)."""
    return suggestion_message(researcher, ("trial_search_suggestion", TRIAL_SEARCH))


def test_dismiss_updates_the_card_in_place_and_a_stale_tab_is_told_why_not(
    live_server,
    card_message,
    session_cookie,
    melanoma_search,  # noqa: F811
    browser,
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


@pytest.mark.celery
def test_ai_column_poll_fills_cells_and_reports_a_failed_row(
    live_server,
    session_cookie,
    abstracts,  # noqa: F811
    esearch_serving,  # noqa: F811
    research_llm,  # noqa: F811
    celery_worker,
    browser,
) -> None:
    esearch_serving(PMIDS)
    gate = threading.Event()

    def judge(prompt: str) -> dict:
        pmid = record_id(prompt)
        if pmid == PMIDS[3]:  # hold the fourth row until the test has seen three settled
            assert gate.wait(15), "the test never saw the progress reach 3 of 5"
        if pmid == PMIDS[1]:
            return {"value": 42, "justification": "not an answer this column can hold"}
        return {"value": "yes", "justification": f"PMID {pmid} says so."}

    research_llm.judge = judge
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/tablizer/?q={QUERY}")
    page.get_by_label("Column name").fill("Human")
    page.get_by_label("Question asked of every row").fill("Does the study involve human participants?")
    # Listen before the run starts, so that every poll counts.
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if "/chat/research/runs/" in request.url else None)
    page.get_by_role("button", name="Add column").click()
    page.locator("[data-ai-run] progress").wait_for()
    page.evaluate(MARK)

    page.wait_for_function("() => document.querySelector('[data-ai-run] progress').value === 3")
    assert page.locator("[data-ai-progress-text]").inner_text() == "3 of 5 rows, 1 failed"
    cells = page.locator("#results td.ai-cell")
    assert cells.nth(1).inner_text() == "Failed"
    assert "does not fit the column" in cells.nth(1).get_attribute("title")
    assert cells.evaluate_all("cells => cells.map(c => c.dataset.aiValue)")[:3] == ["yes", "", "yes"]
    gate.set()
    page.wait_for_function("() => document.querySelector('[data-ai-progress-text]').textContent.startsWith('Done')")

    assert page.evaluate(SAME_DOCUMENT)  # progress and cells came by polling, not by reloading
    assert page.locator("[data-ai-progress-text]").inner_text() == "Done: 5 of 5 rows, 1 failed."
    assert page.locator("[data-ai-run] label").inner_text() == "Evaluated Human"
    assert cells.evaluate_all("cells => cells.map(c => c.dataset.aiValue)") == ["yes", "", "yes", "yes", "yes"]
    assert cells.nth(4).get_attribute("title") == f"PMID {PMIDS[4]} says so."
    assert len(research_llm.row_requests) == 5
    # At least the poll that brought "Done": the fourth row was held until the page showed three settled. (The
    # page that added the column may already show three settled rows, so that poll can be the only one.)
    polled = len(polls)
    assert polled >= 1
    page.wait_for_timeout(1200)  # the finished block carries no poll: nothing more is asked for
    assert page.locator("[data-ai-run][hx-get]").count() == 0
    assert len(polls) == polled


def test_a_card_streamed_into_the_tray_is_dismissed_in_place(
    live_server,
    session_cookie,
    melanoma_search,  # noqa: F811
    browser,
) -> None:
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/trialscout/")
    page.evaluate(MARK)
    ask_in_tray(page, "phase 3 melanoma trials that are recruiting")
    card = page.locator("[data-payload-card=trial_search_suggestion]")
    card.wait_for()

    card.get_by_role("button", name="Dismiss").click()
    card.locator("[data-payload-state]").wait_for()

    assert page.evaluate(SAME_DOCUMENT)  # htmx wired the streamed card: no form post, no reload
    assert page.url == f"{live_server.url}/trialscout/"
    assert card.locator("[data-payload-state]").inner_text() == "Dismissed"
    assert page.locator("#tray-status").inner_text() == "Suggestion dismissed."
    assert len(melanoma_search.log) == 0  # dismissing runs no search
