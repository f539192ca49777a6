"""A question about TrialScout's loaded rows, in Chromium: the answer is a list naming the rows, with a badge that
says whether the rows answer it."""

from __future__ import annotations

import pytest

from tests.browser.pages import ask_in_tray, logged_in_page
from tests.research.conftest import MELANOMA_NCTS, melanoma_search  # noqa: F401  (fixtures)
from tests.trials.conftest import _ctgov_server, _no_real_ctgov, ctgov, ctgov_dir, recording  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def ask(page, question: str, turn: int):
    ask_in_tray(page, question)
    answer = page.locator("#tray-thread .tray-turn article.chat-turn.assistant").nth(turn)
    answer.wait_for()
    return answer


def test_a_count_question_is_answered_as_a_list_of_the_rows_with_its_badge(
    live_server,
    session_cookie,
    melanoma_search,  # noqa: F811
    browser,
) -> None:
    page = logged_in_page(browser, live_server, session_cookie)
    page.goto(f"{live_server.url}/trialscout/?condition=melanoma&status=RECRUITING")

    answer = ask(page, "How many of these trials are recruiting?", 0)

    assert answer.locator(".chat-answer p").first.inner_text() == "3 of the 3 loaded trials match Recruiting:"
    items = answer.locator(".chat-answer ul li")
    assert items.count() == 3
    assert not any(text.startswith("- ") for text in items.all_inner_texts())
    assert answer.locator(".chat-answer a.row-id").all_inner_texts() == MELANOMA_NCTS
    assert answer.locator(".chat-answer a.row-id").first.get_attribute("href") == (
        f"https://clinicaltrials.gov/study/{MELANOMA_NCTS[0]}"
    )
    assert answer.locator(".badge.green").inner_text() == "Confidence: GREEN"
    assert answer.locator(".chat-confidence-reasons").inner_text() == (
        "Why GREEN: computed from all 3 loaded trials; the 3 that address the question are cited."
    )

    refused = ask(page, "Which of these are RCTs?", 1)

    assert refused.locator(".badge.red").inner_text() == "Confidence: RED"
    assert refused.locator(".chat-answer").inner_text().startswith("None of the 3 loaded trials records a publication")
    assert refused.locator(".chat-answer ul").count() == 0


NEWEST_REPLY_IN_VIEW = """() => {
    const thread = document.getElementById("tray-thread");
    const turns = thread.querySelectorAll(".tray-turn");
    const newest = turns[turns.length - 1].getBoundingClientRect();
    const box = thread.getBoundingClientRect();
    const atEnd = thread.scrollTop + thread.clientHeight >= thread.scrollHeight - 2;
    // The reply starts at the top of the thread's view, or all of it shows above the thread's end.
    return thread.scrollHeight > thread.clientHeight && thread.scrollTop > 0
        && newest.top >= box.top - 2 && (newest.top <= box.top + 2 || atEnd);
}"""


def test_each_reply_is_scrolled_into_view_and_focused_never_the_page_body(
    live_server,
    session_cookie,
    melanoma_search,  # noqa: F811
    browser,
) -> None:
    page = logged_in_page(browser, live_server, session_cookie)
    page.set_viewport_size({"width": 1280, "height": 560})  # a short tray: the thread must scroll
    page.goto(f"{live_server.url}/trialscout/?condition=melanoma&status=RECRUITING")
    questions = ["How many of these trials are recruiting?", "Which of these are RCTs?",
                 "How many of these trials are recruiting?"]
    for turn, question in enumerate(questions):
        page.get_by_label("Your question").fill(question)
        page.keyboard.press("Tab")  # to Ask, then send it from the keyboard
        assert page.evaluate("document.activeElement.textContent") == "Ask"
        page.keyboard.press("Enter")
        page.locator("#tray-thread .tray-turn article.chat-turn.assistant").nth(turn).wait_for()
        page.wait_for_function("() => !document.querySelector('form[data-tray-form] button[type=submit]').disabled")
        focused = page.evaluate(
            "() => { const a = document.activeElement; return [a.tagName, a.className, a.closest('.tray-turn') === "
            "[...document.querySelectorAll('#tray-thread .tray-turn')].pop()]; }"
        )
        assert focused == ["ARTICLE", "chat-turn assistant", True], focused
        assert page.locator("#tray-status").inner_text() == "Reply ready."
        assert page.evaluate(NEWEST_REPLY_IN_VIEW) or turn == 0  # the first reply may fit without scrolling
    # The newest reply is the focused, labelled answer: Tab moves on to the rows it names.
    assert page.evaluate("document.activeElement.getAttribute('aria-labelledby')").endswith("-label")

    page.reload()  # a reloaded page opens the thread at its newest turn
    page.locator("#tray-thread .tray-turn").last.wait_for()
    assert page.evaluate(NEWEST_REPLY_IN_VIEW)
