"""The chat page in Debian's headless Chromium: log in, ask, watch the answer stream, follow a reference."""

from __future__ import annotations

import re

import pytest

from tests.browser.pages import QUESTION, log_in
from tests.chat.conftest import FAKE_KEY
from tests.chat.fakes import Reply, Text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

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


def test_a_case_vignette_in_shorthand_is_answered_with_the_finding_first(live_server, clinician, seeded, browser):
    from tests.chat.test_evidence_brain import CTDNA_VIGNETTE

    page = browser.new_page()
    page.set_default_timeout(20000)
    log_in(page, live_server.url)
    page.get_by_label("Your question").fill(CTDNA_VIGNETTE)
    page.get_by_role("button", name="Ask").click()
    answer = page.locator("article.chat-turn.assistant:not(.pending)")
    answer.locator(".chat-references").wait_for()
    text = answer.inner_text()
    first = text[text.index("Bottom line:") :].split("\n", 1)[0]
    assert "DYNAMIC" in first and "noninferior" in first, first
    assert "Nothing stored here" not in text
    assert answer.locator(".chat-references li a.ref-title").first.get_attribute("href") == (
        "https://pubmed.ncbi.nlm.nih.gov/35657320/"
    )
