"""Readable at a laptop's 1366 px and a phone's 390 px: the library list and the chat page, measured in Chromium."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from chat.models import Message, MessageRole
from chat.services.conversations import conversation_create
from evidence.models import Study
from tests.browser.pages import PASSWORD, log_in
from tests.chat.test_reference_links import REFERENCE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= window.innerWidth"


def screenshot_size(page, path: Path) -> tuple[int, int]:
    """Take a full-page screenshot (kept under pytest's tmp dir for a look) and return its pixel size."""
    png = page.screenshot(path=str(path), full_page=True)
    width, height = struct.unpack(">II", png[16:24])  # the PNG IHDR chunk
    return width, height


def open_page(browser, viewport: dict[str, int], url: str):
    page = browser.new_page(viewport=viewport)
    page.set_default_timeout(15000)
    page.goto(url)
    return page


def test_library_list_is_readable_on_a_laptop(live_server, seeded, browser, tmp_path) -> None:
    rows = min(Study.objects.count(), 25)
    page = open_page(browser, LAPTOP, f"{live_server.url}/library/")
    assert page.locator("table.library-table tbody tr").count() == rows
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    widths = page.evaluate(
        "[...document.querySelectorAll('table.library-table tbody tr:first-child td')].map(td => td.offsetWidth)"
    )
    key_finding = widths[-1]
    assert key_finding >= 400, f"the key finding column is {key_finding} px wide"
    height = page.evaluate("document.documentElement.scrollHeight")
    # 25 rows of about five lines each; squeezed to ~130 px the key finding made the page ~11,700 px tall.
    assert height <= 25 * 190 + 900, f"the page is {height} px tall"
    assert screenshot_size(page, tmp_path / "library-1366.png") == (LAPTOP["width"], height)
    page.close()


def test_library_list_is_one_column_of_cards_on_a_phone(live_server, seeded, browser, tmp_path) -> None:
    page = open_page(browser, PHONE, f"{live_server.url}/library/")
    assert page.evaluate(NO_SIDEWAYS_SCROLL), page.evaluate("document.documentElement.scrollWidth")
    first = page.locator("table.library-table tbody tr").first
    box = first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    # Each cell says what it is, as the column headers are not shown on a card.
    labels = page.evaluate(
        "[...document.querySelectorAll('table.library-table tbody tr:first-child td')]"
        ".map(td => getComputedStyle(td, '::before').content)"
    )
    assert labels[-1] == '"Key finding"'
    finding = first.locator("td").last.bounding_box()
    assert finding is not None and finding["width"] >= PHONE["width"] - 80
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= 25 * 520, f"the page is {height} px tall"
    assert screenshot_size(page, tmp_path / "library-390.png") == (PHONE["width"], height)
    page.close()


def test_chat_on_a_phone_shows_the_question_box_and_answer_before_the_conversation_list(
    live_server, clinician, browser, tmp_path
) -> None:
    clinician.set_password(PASSWORD)
    clinician.save()
    conversation = conversation_create(user=clinician)
    for index in range(6):
        conversation_create(user=clinician, title=f"Earlier question {index}")
    Message.objects.create(conversation=conversation, role=MessageRole.USER, content="ctDNA-guided adjuvant therapy?")
    Message.objects.create(
        conversation=conversation,
        role=MessageRole.ASSISTANT,
        content="ctDNA guidance halved chemotherapy use [1].",
        extras={"references": [REFERENCE], "confidence": "YELLOW"},
    )
    page = open_page(browser, PHONE, f"{live_server.url}/chat/")
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/chat/{conversation.pk}/")
    assert page.evaluate(NO_SIDEWAYS_SCROLL), page.evaluate("document.documentElement.scrollWidth")

    def top(selector: str) -> float:
        box = page.locator(selector).first.bounding_box()
        assert box is not None, selector
        return box["y"]

    answer, ask, sidebar = top("article.chat-turn.assistant"), top("form.chat-ask"), top("nav.chat-sidebar")
    assert answer < sidebar and ask < sidebar
    # The DOM order matches, so keyboard and screen-reader users meet the answer first too.
    assert page.evaluate(
        "document.querySelector('.chat-main').compareDocumentPosition(document.querySelector('.chat-sidebar'))"
        " & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert screenshot_size(page, tmp_path / "chat-390.png")[0] == PHONE["width"]
    doi = page.locator(".chat-references a.ref-doi")
    assert doi.get_attribute("href") == "https://doi.org/10.1056/NEJMoa2200075"
    page.set_viewport_size(LAPTOP)
    assert top("nav.chat-sidebar") <= top("article.chat-turn.user")
    sidebar_box = page.locator("nav.chat-sidebar").bounding_box()
    main_box = page.locator(".chat-main").bounding_box()
    assert sidebar_box is not None and main_box is not None and sidebar_box["x"] < main_box["x"]
    page.close()
