"""TrialScout in headless Chromium: "Load more" appends rows with JavaScript and navigates without it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PHELAN_TOKEN = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw"
PHELAN_TOKEN_2 = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4bmjeauvk_IQ"


@pytest.fixture
def browser() -> Iterator[object]:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (make browser)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls made here are still sync.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def phelan_pages(ctgov: HTTPServer, recording: Callable[[str], bytes], settings) -> HTTPServer:
    settings.CTGOV_PAGE_SIZE = 5
    pages = {
        None: recording("biomcp/search_phelan_limit5_20260811.json"),
        PHELAN_TOKEN: recording("biomcp/search_phelan_next_20260811.json"),
        # No page 3 of this search was recorded; the recorded final page of the same query stands in.
        PHELAN_TOKEN_2: recording("biomcp/search_phelan_limit50_20260811.json"),
    }
    ctgov.expect_request("/api/v2/studies").respond_with_handler(
        lambda request: Response(pages[request.args.get("pageToken")], content_type="application/json")
    )
    return ctgov


def test_load_more_appends_rows_in_place_until_the_end(browser, live_server, phelan_pages: HTTPServer) -> None:
    page = browser.new_page()
    page.set_default_timeout(5000)
    start = f"{live_server.url}/trialscout/?condition=Phelan-McDermid+Syndrome"
    page.goto(start)
    rows = page.locator("#trial-results tbody tr")
    assert rows.count() == 5

    page.get_by_role("link", name="Load more trials").click()
    page.wait_for_function("() => document.querySelectorAll('#trial-results tbody tr').length === 10")

    assert page.url == start, "rows were appended without leaving the page"
    assert page.locator("#trial-results-status").inner_text() == "5 more trials loaded, 10 shown."
    assert rows.nth(5).locator("a").inner_text() == "NCT05187377"
    assert page.evaluate("document.activeElement.textContent") == "NCT05187377"

    page.get_by_role("link", name="Load more trials").click()
    page.wait_for_function("() => document.querySelectorAll('#trial-results tbody tr').length === 13")

    assert page.locator("a[data-load-more]").count() == 0
    assert page.locator("#trial-load-more").inner_text().strip() == "End of results."
    assert page.locator("#trial-results-status").inner_text().startswith("3 more trials loaded, ")
    assert [request.args.get("pageToken") for request, _ in phelan_pages.log] == [None, PHELAN_TOKEN, PHELAN_TOKEN_2]


def test_load_more_without_javascript_opens_the_next_page(browser, live_server, phelan_pages: HTTPServer) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(5000)
    page.goto(f"{live_server.url}/trialscout/?condition=Phelan-McDermid+Syndrome")

    page.get_by_role("link", name="Load more trials").click()
    page.wait_for_url(f"**page_token={PHELAN_TOKEN}")

    assert page.locator("#results-heading").inner_text() == "More trials"
    assert page.locator("#trial-results tbody tr").count() == 5
    assert page.locator("#trial-results tbody tr").first.locator("a").inner_text() == "NCT05187377"
    context.close()
