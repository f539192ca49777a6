"""The chat page in Debian's headless Chromium: log in, ask, watch the answer stream, follow a reference."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chat.conftest import FAKE_KEY
from tests.chat.fakes import Reply, Text
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUESTION = "Should a patient with atrial fibrillation and stage 4 chronic kidney disease receive oral anticoagulation?"
PASSWORD = "correct horse battery"


@pytest.fixture
def browser() -> Iterator[object]:
    """Chromium; request it last: once Playwright's event loop runs in this thread, asgiref gives ORM
    calls made here a connection of their own that nobody closes, so create database rows first."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (make browser)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; Django's ORM calls here are still synchronous.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def clinician(db):
    return UserFactory(username="dr-browser")


@pytest.fixture
def seeded(transactional_db) -> None:
    from evidence.services.seed import evidence_seed
    from evidence.services.vocabulary_seed import vocabulary_seed

    # As `seed_evidence` (and so `make run`) does: the library and the vocabulary it is judged with.
    evidence_seed()
    vocabulary_seed()


def log_in(page, base_url: str) -> None:
    page.goto(f"{base_url}/chat/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("dr-browser")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base_url}/chat/")


def test_ask_watch_the_answer_stream_and_follow_a_reference(
    live_server, clinician, seeded, fake_anthropic, settings, browser
):
    settings.LLM_PROVIDER = "anthropic"
    settings.LLM_MODEL = "claude-test"
    settings.LLM_MAX_RETRIES = 0
    settings.ANTHROPIC_API_KEY = FAKE_KEY
    fake_anthropic.script(
        # First the model proposes the question's PICO (a plain JSON message), then it streams the answer.
        Reply(
            [
                Text(
                    '{"patient": "", "intervention": "anticoagulation", "comparison": "", "outcome": "", '
                    '"condition": "AF with CKD", "disease_tags": ["af", "ckd"], "decision_tags": ["anticoagulation"]}'
                )
            ]
        ),
        Reply(
            [
                Text(
                    "The US guideline revises advice on estimating stroke risk, oral anticoagulation, left atrial "
                    "appendage occlusion and catheter ablation (PMID: 38033089). A fabricated registry claims "
                    "otherwise (PMID: 99999999). KDIGO summarises how to prevent stroke across CKD stages and on "
                    "dialysis "
                    "[citation:pmid:29522134:key_finding]. "
                    "Dosing of direct oral anticoagulants must follow kidney function."
                )
            ],
            chunk_delay=0.08,
        )
    )
    page = browser.new_page()
    page.set_default_timeout(15000)
    log_in(page, live_server.url)

    page.get_by_label("Your question").fill(QUESTION)
    page.get_by_role("button", name="Ask").click()

    preview = page.locator(".chat-turn.pending .chat-preview")
    preview.filter(has_text="The US guideline revises advice").wait_for()
    assert "99999999" not in preview.inner_text()

    answer = page.locator("article.chat-turn.assistant:not(.pending)")
    answer.locator(".chat-references").wait_for()
    assert re.search(r"/chat/\d+/$", page.url), "the address became the conversation's"
    assert "99999999" not in page.content()
    # Two of the four statements are supported by what they cite; the other two are removed and
    # listed, and an answer that lost half its statements is not GREEN.
    assert answer.locator(".badge").first.inner_text() == "Confidence: YELLOW"
    assert answer.locator(".chat-removed summary").inner_text() == "2 statements removed as unsupported"
    text = answer.locator(".chat-answer").inner_text()
    assert text.startswith(
        "The US guideline revises advice on estimating stroke risk, oral anticoagulation, left atrial appendage "
        "occlusion and catheter ablation [1]."
    )
    assert "registry" not in text and "must follow kidney function" not in text

    references = answer.locator(".chat-references li")
    assert references.count() == 2
    answer.locator("sup.cite a").first.click()
    target = references.first
    assert page.url.endswith(f"#{target.get_attribute('id')}")
    page.wait_for_function("() => document.activeElement && document.activeElement.id.startsWith('ref-')")
    assert page.evaluate("document.activeElement.id") == target.get_attribute("id")
    assert "highlight" in target.get_attribute("class")
    link = target.locator("a.ref-title")
    assert link.get_attribute("href") == "https://pubmed.ncbi.nlm.nih.gov/38033089/"
    assert link.inner_text().startswith(
        "2023 ACC/AHA/ACCP/HRS Guideline for the Diagnosis and Management of Atrial Fibrillation"
    )
    assert "Joglar JA et al." in target.inner_text()


def test_asking_works_without_javascript(live_server, clinician, seeded, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, live_server.url)
    page.get_by_label("Your question").fill("Does empagliflozin reduce heart failure hospitalisation in HFpEF?")
    page.get_by_role("button", name="Ask").click()
    page.wait_for_url(re.compile(r"/chat/\d+/#message-\d+$"))
    answer = page.locator("article.chat-turn.assistant")
    assert answer.locator(".chat-references li").first.locator("a.ref-title").get_attribute("href") == (
        "https://pubmed.ncbi.nlm.nih.gov/34449189/"
    )
    answer.locator("sup.cite a").first.click()
    assert page.url.endswith("#" + answer.locator(".chat-references li").first.get_attribute("id"))
    context.close()
