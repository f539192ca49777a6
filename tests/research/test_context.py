"""Context builders: page state (the page's query string) -> what the model reads, rebuilt on the server."""

from __future__ import annotations

import pytest

from research.context import PROMPT_ITEMS
from research.pages import tablizer, trialscout
from tests.research.conftest import MELANOMA_NCTS
from tests.research.factories import AIColumnFactory, AIColumnResultFactory

pytestmark = pytest.mark.django_db


def test_trialscout_context_lists_search_counts_columns_and_trials(melanoma_search, user) -> None:
    column = AIColumnFactory(user=user, page="trialscout", name="Over 65", criteria="Enrols adults over 65?")
    AIColumnResultFactory(column=column, item_id="NCT04114136", value="yes")
    AIColumnResultFactory(column=column, item_id="NCT06970236", value="no")
    AIColumnFactory(page="trialscout", name="Someone else's column")

    context = trialscout.build_context(state="condition=melanoma&status=RECRUITING&phase=PHASE2", user=user)

    assert context.item_ids == MELANOMA_NCTS
    assert context.total == 480
    assert context.state == "condition=melanoma&phase=PHASE2&status=RECRUITING"
    text = context.prompt_text()
    assert text.splitlines()[:10] == [
        "PAGE: TrialScout - ClinicalTrials.gov search results as a table, with AI columns.",
        "Condition: melanoma",
        "Intervention: (any)",
        "Phase: Phase 2",
        "Status: Recruiting",
        "Lead sponsor: (any)",
        "Counts: 480 trials match in ClinicalTrials.gov; 3 loaded on the page.",
        "AI columns:",
        '- "Over 65" (boolean): Enrols adults over 65? - 1 yes, 1 no; 1 row(s) not evaluated',
        "First 3 of 3 loaded trials (cite one as [citation:nct:<id>:summary]):",
    ]
    assert text.splitlines()[10].startswith(
        "1. NCT06970236 | Resistance Exercise in Patients With Ocular Melanoma | Not applicable | Recruiting | "
    )
    assert text.splitlines()[10].endswith(" | Over 65: no")
    assert text.splitlines()[11].endswith(" | Over 65: yes")
    assert "Over 65:" not in text.splitlines()[12]
    assert "staged" not in text
    [request] = [entry for entry, _ in melanoma_search.log]
    assert request.args.get("query.cond") == "melanoma"
    assert request.args.get("filter.overallStatus") == "RECRUITING"


def test_trialscout_context_reads_the_search_from_the_cache(melanoma_search, user) -> None:
    trialscout.build_context(state="condition=melanoma", user=user)
    trialscout.build_context(state="condition=melanoma&more=", user=user)

    assert len(melanoma_search.log) == 1


def test_trialscout_state_with_more_pages_loads_each_page(ctgov, recording, user, settings) -> None:
    settings.CTGOV_PAGE_SIZE = 5
    pages = {
        None: recording("biomcp/search_phelan_limit5_20260811.json"),
        "TOKEN2": recording("biomcp/search_phelan_next_20260811.json"),
    }
    from werkzeug import Response

    ctgov.expect_request("/api/v2/studies").respond_with_handler(
        lambda request: Response(pages[request.args.get("pageToken")], content_type="application/json")
    )

    context = trialscout.build_context(state="condition=Phelan-McDermid+Syndrome&more=TOKEN2", user=user)

    assert len(context.items) == 10
    assert context.item_ids[5] == "NCT05187377"
    assert context.state == "condition=Phelan-McDermid+Syndrome&more=TOKEN2"
    assert "Counts: 21 trials match in ClinicalTrials.gov; 10 loaded on the page." in context.prompt_text()


@pytest.mark.parametrize("state", ["", "phase=PHASE9", "condition=" + "x" * 301, "sort=weird&condition=x"])
def test_an_empty_or_invalid_trialscout_state_searches_nothing(ctgov, user, state: str) -> None:
    context = trialscout.build_context(state=state, user=user)

    assert context.items == []
    assert context.searched is False
    assert context.prompt_text().splitlines()[-1] == "No trials are loaded (no search has been run yet)."
    assert ctgov.log == []


def test_trialscout_context_reports_a_registry_failure(ctgov, user) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data("overloaded", status=503)

    context = trialscout.build_context(state="condition=melanoma", user=user)

    assert context.items == []
    assert context.error.startswith("ClinicalTrials.gov")
    assert f"The page shows an error: {context.error}" in context.prompt_text()
    assert context.prompt_text().splitlines()[-1] == "No trials are loaded (the search found none)."


def test_tablizer_context_lists_query_range_counts_and_articles(abstracts, esearch_serving, user) -> None:
    esearch_serving(["35123456", "22663011", "28775130"])
    column = AIColumnFactory(user=user, page="tablizer", name="RCT", criteria="Is it an RCT?")
    AIColumnResultFactory(column=column, item_id="22663011", value="unclear")

    context = tablizer.build_context(state="q=pten+mutation&year_from=2010&year_to=2024", user=user)

    assert context.item_ids == ["35123456", "22663011", "28775130"]
    assert context.state == "q=pten+mutation&year_from=2010&year_to=2024&n=20&sort=relevance&dir=asc"
    lines = context.prompt_text().splitlines()
    assert lines[:4] == [
        "PAGE: Tablizer - PubMed search results as a table, with snapshots, compare mode and AI columns.",
        "Query: pten mutation",
        lines[2],
        "Date range: 2010-2024",
    ]
    assert lines[2].startswith("PubMed searched: ")
    assert lines[4:9] == [
        "Counts: 3 articles match in PubMed; 3 loaded on the page.",
        "Snapshots: none saved",
        "Compare mode: off",
        "AI columns:",
        '- "RCT" (boolean): Is it an RCT? - 1 unclear; 2 row(s) not evaluated',
    ]
    assert lines[9] == "First 3 of 3 loaded articles (cite one as [citation:pmid:<id>:abstract]):"
    assert lines[10].startswith("1. PMID 35123456 | ")
    assert lines[11].startswith("2. PMID 22663011 | ") and lines[11].endswith(" | RCT: unclear")


def test_more_rows_than_fit_are_announced_as_staged(melanoma_search, user) -> None:
    context = trialscout.build_context(state="condition=melanoma", user=user)
    context.items = context.items * 9  # 27 rows

    text = context.prompt_text()
    staged = context.staged_lines(start=PROMPT_ITEMS)

    assert f"First {PROMPT_ITEMS} of 27 loaded trials" in text
    assert text.splitlines()[-1] == (
        "The other 7 loaded trials are staged: call get_staged_items (offset 20, up to 25 per call) to read them "
        "before answering about all of them."
    )
    assert [entry["line"].split(".")[0] for entry in staged] == [str(n) for n in range(21, 28)]
    assert staged[0]["source"]["doc_id"] == f"nct:{context.items[20].item_id}"


def test_load_items_reads_full_records_and_reports_what_is_missing(abstracts, study_records, user) -> None:
    study_records({"NCT04114136": "biomcp/search_melanoma_recruiting_limit3_20260811.json", "NCT00000001": None})

    articles = tablizer.load_items(item_ids=["22663011", "11111111"])
    trials = trialscout.load_items(item_ids=["NCT04114136", "NCT00000001"])

    assert articles["22663011"].text.startswith("PMID 22663011: ")
    assert "Abstract: " in articles["22663011"].text
    assert articles["11111111"].message == "PMID 11111111 is not in the abstract store; search for it again."
    assert trials["NCT04114136"].text.startswith("ClinicalTrials.gov NCT04114136: ")
    assert "Eligibility" in trials["NCT04114136"].text
    assert "NCT00000001" in trials["NCT00000001"].message
