"""The holding pen: rows beyond the prompt staged server-side, read a page at a time by get_staged_items."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from evidence.sources import ORIGIN_RETRIEVED, EvidenceSource
from research.holding_pen import PenExpired, pen_page, pen_stage
from research.registries import page_get
from research.tools import PageToolbox


def _entries(first: int, count: int) -> list[dict]:
    return [
        {
            "item_id": f"NCT{number:08d}",
            "line": f"{number + 1}. NCT{number:08d} | Trial {number}",
            "source": EvidenceSource(
                doc_id=f"nct:NCT{number:08d}",
                chunk_id="summary",
                origin=ORIGIN_RETRIEVED,
                title=f"Trial {number}",
                nct=f"NCT{number:08d}",
                kind="trial",
            ).as_dict(),
        }
        for number in range(first, first + count)
    ]


@pytest.mark.parametrize(
    ("offset", "limit", "ids", "next_offset"),
    [
        (20, 10, list(range(20, 30)), 30),
        (30, 10, list(range(30, 40)), 40),
        (40, 10, list(range(40, 45)), None),
        (25, 3, [25, 26, 27], 28),
        (20, 99, list(range(20, 45)), None),
        (45, 10, [], None),
    ],
)
def test_staged_rows_page_from_their_offset(offset: int, limit: int, ids: list[int], next_offset) -> None:
    key = pen_stage(entries=_entries(20, 25), offset=20)

    page = pen_page(key=key, offset=offset, limit=limit)

    assert [entry["item_id"] for entry in page.entries] == [f"NCT{number:08d}" for number in ids]
    assert page.total == 45
    assert page.next_offset == next_offset


def test_rows_in_the_prompt_are_not_in_the_pen() -> None:
    key = pen_stage(entries=_entries(20, 5), offset=20)

    with pytest.raises(
        ValueError, match=r"^Rows before 20 are in the prompt already; staged rows start at offset 20\.$"
    ):
        pen_page(key=key, offset=5)


def test_an_expired_pen_says_so() -> None:
    key = pen_stage(entries=_entries(20, 5), offset=20)
    cache.clear()

    with pytest.raises(PenExpired, match="expired"):
        pen_page(key=key, offset=20)


def test_get_staged_items_tool_returns_rows_with_citations_and_sources() -> None:
    key = pen_stage(entries=_entries(20, 12), offset=20)
    toolbox = PageToolbox(page=page_get("trialscout"), pen_key=key)

    first = toolbox.run(call_id="c1", name="get_staged_items", arguments={"offset": 20}, max_results=5)
    last = toolbox.run(call_id="c2", name="get_staged_items", arguments='{"offset": 30, "limit": 5}', max_results=5)

    assert first.is_error is False
    assert first.content.splitlines()[0] == "Rows 21-30 of 32:"
    assert first.content.splitlines()[1] == "21. NCT00000020 | Trial 20 | cite as [citation:nct:NCT00000020:summary]"
    assert first.content.splitlines()[-1] == "More rows: call get_staged_items with offset 30."
    assert [source.nct for source in first.sources] == [f"NCT{n:08d}" for n in range(20, 30)]
    assert last.content.splitlines()[0] == "Rows 31-32 of 32:"
    assert last.content.splitlines()[-1] == "These are the last loaded rows."


def test_toolbox_offers_the_page_tools_and_the_pen_only_when_rows_are_staged() -> None:
    staged = PageToolbox(page=page_get("tablizer"), pen_key="abc")
    unstaged = PageToolbox(page=page_get("trialscout"))

    assert staged.names == ["search_pubmed", "get_pubmed_article", "get_staged_items"]
    assert [spec["name"] for spec in unstaged.specs()] == ["get_trial"]
    refused = unstaged.run(call_id="c", name="search_pubmed", arguments={"query": "x"}, max_results=5)
    assert refused.is_error is True
    assert refused.content == (
        "Invalid call to search_pubmed: there is no tool named 'search_pubmed'; available tools: get_trial. "
        "Fix the arguments and call again."
    )


def test_bad_staged_items_arguments_are_an_error_result() -> None:
    toolbox = PageToolbox(page=page_get("trialscout"), pen_key=pen_stage(entries=_entries(20, 2), offset=20))

    result = toolbox.run(call_id="c", name="get_staged_items", arguments={"offset": -1}, max_results=5)

    assert result.is_error is True
    assert result.content.startswith("Invalid call to get_staged_items: offset: -1 is less than the minimum of 0")
