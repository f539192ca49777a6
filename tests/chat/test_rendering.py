"""Answer Markdown becomes sanitised HTML; lists render as lists in chat and in the research trays."""

from __future__ import annotations

import pytest

from chat.rendering import render_answer_html


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("Two of the loaded articles:\n- PMID 1 [1]\n- PMID 2 [2]", ["PMID 1 [1]", "PMID 2 [2]"]),
        ("Ranked:\n1. first\n2. second", ["first", "second"]),
        ("Already apart:\n\n* one\n* two", ["one", "two"]),
    ],
)
def test_a_list_right_after_a_line_of_prose_renders_as_a_list(text: str, items: list[str]) -> None:
    html = render_answer_html(text, message_id=7, reference_count=0)

    assert "<li>- " not in html and "\n- " not in html
    assert [part.split("</li>")[0] for part in html.split("<li>")[1:]] == items


def test_prose_with_a_hyphen_inside_a_line_stays_prose() -> None:
    html = render_answer_html("Metformin - a biguanide - lowers glucose.", message_id=7, reference_count=0)

    assert html == "<p>Metformin - a biguanide - lowers glucose.</p>"
