"""Answer Markdown becomes sanitised HTML; lists render as lists in chat and in the research trays."""

from __future__ import annotations

import pytest

from chat.rendering import render_answer_html, render_preview_html
from chat.streaming import Preview


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


def test_named_references_write_the_identifier_as_a_link_before_the_marker() -> None:
    html = render_answer_html(
        "1 of the 2 loaded articles matches metformin:\n- Metformin and survival [1]",
        message_id=7,
        reference_count=1,
        names={1: ("PMID 101", "https://pubmed.ncbi.nlm.nih.gov/101/")},
    )

    assert html == (
        "<p>1 of the 2 loaded articles matches metformin:</p>\n<ul>\n<li>Metformin and survival "
        '<a class="row-id" href="https://pubmed.ncbi.nlm.nih.gov/101/" target="_blank" rel="noopener noreferrer">'
        'PMID 101</a> <sup class="cite"><a href="#ref-7-1" data-ref="ref-7-1" aria-label="Reference 1">[1]</a>'
        "</sup></li>\n</ul>"
    )


def test_the_streamed_preview_renders_lists_and_leaves_markers_unlinked() -> None:
    html = render_preview_html("3 of the 3 loaded trials match Recruiting:\n- Exercise in melanoma [1]\n")

    assert html == "<p>3 of the 3 loaded trials match Recruiting:</p>\n<ul>\n<li>Exercise in melanoma [1]</li>\n</ul>"


def test_the_preview_renders_each_paragraph_once_when_it_is_completed() -> None:
    preview = Preview()

    assert preview.add("Found 2:\n- first") == {"tail": "Found 2:\n- first"}
    assert preview.add(" row\n- second\n\nBoth") == {
        "tail": "Both",
        "html": "<p>Found 2:</p>\n<ul>\n<li>first row</li>\n<li>second</li>\n</ul>",
    }
    assert preview.add(" agree.") == {"tail": "Both agree."}
    assert preview.add("\n\n") == {"tail": "", "html": "<p>Both agree.</p>"}
