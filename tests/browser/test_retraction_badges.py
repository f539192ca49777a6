"""Retracted and level-of-evidence badges in Debian's headless Chromium: Tablizer rows, the abstract page
and the references of a chat answer (whose trace names the retracted study it left out)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.pages import QUESTION, log_in
from tests.chat.conftest import _eutils_server, esearch_for, eutils, eutils_recording  # noqa: F401
from tests.research.conftest import abstracts, esearch_serving  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "efetch_retractions.xml"


@pytest.fixture
def colchicine_search(abstracts, esearch_serving):  # noqa: F811
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    abstracts_upsert(records=parse_pubmed_xml(FIXTURE.read_bytes()), embed=False)
    esearch_serving(["99000001", "22663011", "99000005"])


def test_tablizer_and_abstract_page_show_retracted_and_level_badges(
    live_server, clinician, colchicine_search, browser
) -> None:
    page = browser.new_page()
    page.set_default_timeout(15000)
    log_in(page, live_server.url)  # the Tablizer and the abstract page call PubMed, so they need an account
    page.goto(f"{live_server.url}/tablizer/?q=colchicine")
    retracted_row = page.locator('tr[data-item="99000001"]')
    badge = retracted_row.locator(".badge.retracted")
    badge.wait_for()
    assert badge.is_visible() and badge.text_content() == "Retracted"
    assert badge.evaluate("el => getComputedStyle(el).backgroundColor") == "rgb(179, 38, 30)"
    levels = page.locator("#results tbody tr .badge.level").evaluate_all("els => els.map(e => e.textContent)")
    assert levels == ["RCT", "RCT", "Systematic review / MA"]
    assert page.locator('tr[data-item="99000005"] .badge.retracted').count() == 0

    page.get_by_label("Level of evidence").select_option("systematic_review")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(re.compile(r"level=systematic_review"))
    assert page.locator("#results tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)") == ["99000005"]

    page.goto(f"{live_server.url}/tablizer/?q=colchicine")
    retracted_row.get_by_role("link", name=re.compile("^Colchicine after myocardial infarction")).click()
    banner = page.locator(".retraction-banner")
    banner.wait_for()
    assert banner.locator(".badge.retracted").text_content() == "Retracted"
    assert "PubMed marks this article retracted." in banner.inner_text()
    assert page.locator("dl.facts .badge.level").text_content() == "RCT"


@pytest.fixture
def kdigo_retracted(seeded) -> str:
    """Record a PubMed check that found the KDIGO AF-in-CKD consensus retracted; return its name."""
    from evidence.models import IdentifierCheck, Study

    kdigo = Study.objects.get(pmid="29522134")
    IdentifierCheck.objects.create(study=kdigo, status="match", pmid=kdigo.pmid, retracted=True)
    return kdigo.study_name


def test_chat_references_carry_level_badges_and_the_trace_names_the_retracted_study(
    live_server, clinician, kdigo_retracted, browser
) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(20000)
    log_in(page, live_server.url)
    page.get_by_label("Your question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()
    page.wait_for_url(re.compile(r"/chat/\d+/#message-\d+$"))
    answer = page.locator("article.chat-turn.assistant")
    references = answer.locator(".chat-references li")
    # The US and European AF guidelines and KDIGO 2024 (its curated finding on AF in CKD); never the retracted one.
    assert references.count() == 3
    assert "29522134" not in answer.locator(".chat-references").inner_text()
    assert references.locator(".badge.level").evaluate_all("els => els.map(e => e.textContent)") == [
        "Guideline", "Guideline", "Guideline"
    ]
    assert references.locator(".badge.retracted").count() == 0
    trace = answer.locator(".chat-trace")
    trace.locator("summary").first.click()
    step = trace.locator("li", has_text="Left out 1 retracted paper or retraction notice.")
    step.locator("summary").click()  # the developer's line, folded under the reader's sentence
    assert f"1 retracted abstract was excluded: PMID 29522134 ({kdigo_retracted})" in step.inner_text()
    context.close()
