"""The Tablizer's chat tray in Debian's headless Chromium, with fake E-utilities and Anthropic servers.

Ask for a query, accept the card and see the results; accept an AI-column suggestion, watch its
progress bar (evaluated by a real Celery worker) finish, and filter the table by the column.
"""

from __future__ import annotations

import json
import threading

import pytest
from django.conf import settings as django_settings

from tests.browser.pages import PMIDS, QUERY, ask_in_tray
from tests.chat.conftest import (  # noqa: F401  (fixtures)
    _eutils_server,
    _llm_server,
    esearch_for,
    eutils,
    eutils_recording,
)
from tests.chat.fakes import Reply, Text
from tests.research.conftest import abstracts, esearch_serving, research_llm  # noqa: F401  (fixtures)
from tests.research.fakes import record_id

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.django_db(transaction=True)]

HUMAN = {"35123456", "22663011"}



def test_query_card_then_ai_column_with_live_progress_and_filter(
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
        if pmid == PMIDS[2]:  # hold the third row until the test has seen the bar at 2 of 5
            assert gate.wait(15), "the test never saw the progress bar move"
        verdict = "yes" if pmid in HUMAN else "no"
        return {"value": verdict, "justification": f"PMID {pmid}: {verdict} by the abstract."}

    research_llm.judge = judge
    research_llm.script(
        Reply(
            [
                Text(
                    "A focused query on PTEN mutations.\n"
                    f"PUBMED_QUERY_SUGGESTION: {json.dumps({'query': QUERY, 'explanation': 'PTEN mutation papers.'})}"
                )
            ],
            chunk_delay=0.02,
        ),
        Reply(
            [
                Text(
                    "A column will tell human studies apart.\nAI_COLUMN_SUGGESTION: "
                    + json.dumps(
                        {
                            "name": "Human",
                            "criteria": "Does the study involve human participants or human samples?",
                            "type": "boolean",
                            "explanation": "Separates human from animal and cell studies.",
                        }
                    )
                )
            ]
        ),
    )
    context = browser.new_context()
    context.add_cookies(
        [{"name": django_settings.SESSION_COOKIE_NAME, "value": session_cookie, "url": live_server.url}]
    )
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{live_server.url}/tablizer/")

    # 1. Ask for a query, accept the card, see the results.
    ask_in_tray(page, "Build me a PubMed query for PTEN mutations")
    card = page.locator("[data-payload-card=pubmed_query_suggestion]")
    card.wait_for()
    assert card.locator("code").inner_text() == QUERY
    assert "PUBMED_QUERY_SUGGESTION" not in page.locator("#tray-thread").inner_text()
    card.get_by_role("button", name="Accept").click()
    page.wait_for_url("**/tablizer/?q=*")
    assert page.get_by_role("searchbox", name="PubMed query").input_value() == QUERY
    assert page.locator(".tablizer-summary").inner_text().startswith("5 results in PubMed; showing 5.")
    assert page.locator("#results tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)") == PMIDS
    assert page.locator("svg.year-histogram rect.bar").count() >= 1

    # 2. Ask for an AI column, accept it, watch the progress bar finish.
    ask_in_tray(page, "Add a column that flags human studies")
    column_card = page.locator("[data-payload-card=ai_column_suggestion]")
    column_card.wait_for()
    column_card.get_by_role("button", name="Accept").click()
    page.wait_for_url("**#ai-columns")
    bar = page.locator("[data-ai-run] progress")
    bar.wait_for()
    page.wait_for_function("() => document.querySelector('[data-ai-run] progress').value === 2")
    assert page.locator("[data-ai-progress-text]").inner_text() == "2 of 5 rows"
    assert page.locator("td.ai-cell[data-ai-value=yes]").count() == 2  # filled while the run goes on
    gate.set()
    page.wait_for_function("() => document.querySelector('[data-ai-progress-text]').textContent.startsWith('Done')")
    assert page.locator("[data-ai-progress-text]").inner_text() == "Done: 5 of 5 rows."
    assert bar.evaluate("bar => [bar.value, bar.max]") == [5, 5]
    cells = page.locator("#results td.ai-cell")
    assert cells.evaluate_all("cells => cells.map(c => c.dataset.aiValue)") == ["yes", "yes", "no", "no", "no"]
    assert cells.first.get_attribute("title") == "PMID 35123456: yes by the abstract."

    # 3. Filter by the column.
    page.locator("a[data-ai-filter]", has_text="Yes").click()
    visible = page.locator("#results tbody tr:not([hidden])")
    assert visible.evaluate_all("rows => rows.map(r => r.dataset.item)") == ["35123456", "22663011"]
    assert page.locator("#tray-status").inner_text() == "2 of 5 rows shown."
    page.locator("a[data-ai-filter]", has_text="No").click()
    assert visible.count() == 3
    page.locator("a[data-ai-filter]", has_text="All").click()
    assert visible.count() == 5


def test_search_with_the_default_any_level_shows_the_results(
    live_server,
    session_cookie,
    abstracts,  # noqa: F811
    esearch_serving,  # noqa: F811
    browser,
) -> None:
    esearch_serving(PMIDS)
    context = browser.new_context()
    context.add_cookies(
        [{"name": django_settings.SESSION_COOKIE_NAME, "value": session_cookie, "url": live_server.url}]
    )
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{live_server.url}/tablizer/")
    level = page.get_by_label("Level of evidence")
    assert level.evaluate("select => select.selectedOptions[0].textContent") == "Any level"
    page.get_by_role("searchbox", name="PubMed query").fill(QUERY)
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="Search").click()
    response = navigation.value
    assert response is not None and response.status == 200
    assert response.url.endswith("&level=")  # the form sent the blank "Any level"
    assert page.locator(".tablizer-summary").inner_text().startswith("5 results in PubMed; showing 5.")
    assert page.locator("#results tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)") == PMIDS
    assert "Select a valid choice" not in page.locator("main").inner_text()
    assert level.evaluate("select => select.selectedOptions[0].textContent") == "Any level"
