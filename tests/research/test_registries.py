"""The page and payload registries: resolution, what each page offers, registration checks."""

from __future__ import annotations

import pytest

from chat.tools import TOOLS
from research.pages import tablizer, trialscout
from research.registries import (
    PAGES,
    Page,
    PayloadType,
    UnknownPage,
    UnknownPayloadType,
    page_get,
    page_payload_types,
    payload_type_get,
    register_page,
    register_payload_type,
)


@pytest.mark.parametrize(
    ("name", "payloads", "tools", "builder", "loader", "url_name"),
    [
        (
            "tablizer",
            ["pubmed_query_suggestion", "ai_column_suggestion"],
            ("search_pubmed", "get_pubmed_article"),
            tablizer.build_context,
            tablizer.load_items,
            "research:tablizer",
        ),
        (
            "trialscout",
            ["trial_search_suggestion", "ai_column_suggestion", "trial_details"],
            ("get_trial",),
            trialscout.build_context,
            trialscout.load_items,
            "research:trialscout",
        ),
    ],
)
def test_page_resolves_to_its_builder_payload_types_and_tools(name, payloads, tools, builder, loader, url_name) -> None:
    page = page_get(name)

    assert [payload_type.name for payload_type in page_payload_types(page)] == payloads
    assert page.tools == tools
    assert all(tool in TOOLS for tool in tools)
    assert page.build_context is builder
    assert page.load_items is loader
    assert page.url_name == url_name


def test_unknown_page_names_the_pages_there_are() -> None:
    with pytest.raises(UnknownPage, match=r"^There is no research page 'chat'; the pages are: tablizer, trialscout\.$"):
        page_get("chat")


def test_unknown_payload_type_names_the_types_there_are() -> None:
    with pytest.raises(UnknownPayloadType) as caught:
        payload_type_get("pubmed_query")

    assert str(caught.value) == (
        "There is no payload type 'pubmed_query'; the types are: ai_column_suggestion, pubmed_query_suggestion, "
        "trial_details, trial_search_suggestion."
    )


@pytest.mark.parametrize(
    ("name", "marker", "decidable"),
    [
        ("pubmed_query_suggestion", "PUBMED_QUERY_SUGGESTION:", True),
        ("trial_search_suggestion", "TRIAL_SEARCH_SUGGESTION:", True),
        ("ai_column_suggestion", "AI_COLUMN_SUGGESTION:", True),
        ("trial_details", "", False),
    ],
)
def test_payload_types_carry_marker_schema_and_instructions(name: str, marker: str, decidable: bool) -> None:
    payload_type = payload_type_get(name)

    assert payload_type.marker == marker
    assert payload_type.decidable is decidable
    assert payload_type.schema["type"] == "object"
    assert payload_type.description
    if marker:
        assert payload_type.instructions.startswith("To suggest ")
        assert marker in payload_type.instructions


def test_trial_search_instructions_list_the_registry_enums() -> None:
    instructions = payload_type_get("trial_search_suggestion").instructions

    assert "phase values: EARLY_PHASE1, PHASE1, PHASE2, PHASE3, PHASE4, NA;" in instructions
    assert (
        "status values: RECRUITING, ACTIVE_NOT_RECRUITING, COMPLETED, NOT_YET_RECRUITING, TERMINATED, WITHDRAWN, "
        "SUSPENDED." in instructions
    )


def test_search_suggestions_open_their_page_filled_in() -> None:
    assert payload_type_get("pubmed_query_suggestion").url_for({"query": 'apixaban AND "CKD"'}) == (
        "/tablizer/?q=apixaban+AND+%22CKD%22"
    )
    assert (
        payload_type_get("trial_search_suggestion").url_for(
            {"condition": "NSCLC", "phase": ["PHASE3", "PHASE2"], "status": ["RECRUITING"], "explanation": "x"}
        )
        == "/trialscout/?condition=NSCLC&phase=PHASE2&phase=PHASE3&status=RECRUITING"
    )
    assert payload_type_get("ai_column_suggestion").url_for({"name": "RCT"}) == ""


def test_registering_twice_or_with_unknown_payload_types_is_refused() -> None:
    with pytest.raises(ValueError, match=r"Payload type 'pubmed_query_suggestion' is already registered\."):
        register_payload_type(PayloadType(name="pubmed_query_suggestion", description="", schema={}))
    with pytest.raises(ValueError, match=r"Parse marker 'AI_COLUMN_SUGGESTION:' is already used"):
        register_payload_type(PayloadType(name="other", description="", schema={}, marker="AI_COLUMN_SUGGESTION:"))
    page = Page(
        name="library",
        title="Library",
        url_name="evidence:library",
        build_context=dict,
        load_items=dict,
        payload_types=("nonexistent",),
        tools=(),
        item_label="study",
        item_label_plural="studies",
        search_payload="pubmed_query_suggestion",
    )
    with pytest.raises(ValueError, match=r"Page 'library' names unregistered payload types: nonexistent\."):
        register_page(page)
    assert "library" not in PAGES
