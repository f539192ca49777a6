"""Tools the model may call: registry, argument checking, and real E-utilities / ClinicalTrials.gov recordings."""

import inspect

import pytest

from chat.tools import TOOLS, get_pubmed_article, get_trial, run_tool, search_pubmed, tool_specs


def test_each_tool_is_registered_with_its_docstring_as_description():
    assert list(TOOLS) == ["search_pubmed", "get_pubmed_article", "get_trial"]
    for function in (search_pubmed, get_pubmed_article, get_trial):
        name = function.__name__
        assert TOOLS[name].description == inspect.getdoc(function)
        assert TOOLS[name].input_schema["additionalProperties"] is False
    assert [spec["name"] for spec in tool_specs()] == list(TOOLS)


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("search_pubmed", {}, "Invalid call to search_pubmed: 'query' is a required property."),
        ("search_pubmed", {"query": "x"}, "Invalid call to search_pubmed: query: 'x' is too short."),
        (
            "search_pubmed",
            {"query": "ctdna", "limit": 3},
            "Invalid call to search_pubmed: Additional properties are not allowed",
        ),
        (
            "search_pubmed",
            {"query": '(apixaban OR "atrial fibrillation"[tiab]'},
            "Invalid call to search_pubmed: query: the query leaves 1 parenthesis(es) open. Fix the arguments",
        ),
        (
            "search_pubmed",
            {"query": 'apixaban[tiab AND "dialysis'},
            'Invalid call to search_pubmed: query: the query has an unmatched double quote (")',
        ),
        ("get_pubmed_article", {"pmid": "0123"}, "Invalid call to get_pubmed_article: pmid: '0123' does not match"),
        ("get_trial", '{"nct_id": ', "Invalid call to get_trial: the arguments are not valid JSON"),
        ("get_trial", "[1, 2]", "Invalid call to get_trial: the arguments must be a JSON object"),
        ("drop_tables", {}, "Invalid call to drop_tables: there is no tool named 'drop_tables'"),
    ],
)
def test_malformed_calls_become_error_results_with_a_precise_message(name, arguments, message):
    result = run_tool(call_id="toolu_x", name=name, arguments=arguments)
    assert result.is_error is True
    assert result.content.startswith(message)
    assert result.sources == []


@pytest.mark.django_db
def test_search_pubmed_returns_real_records_as_citable_sources(eutils, eutils_recording, esearch_for):
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(
        esearch_for(["34313350", "27078154"]), content_type="application/json"
    )
    eutils.expect_request("/entrez/eutils/esummary.fcgi").respond_with_data(
        eutils_recording("yeliztli/esummary_pubmed_json_34313350_27078154.json"), content_type="application/json"
    )
    result = run_tool(call_id="toolu_1", name="search_pubmed", arguments={"query": "APOE lipids", "max_results": 2})
    assert result.is_error is False, result.content
    assert (eutils.log[0][0].args["term"], eutils.log[0][0].args["retmax"]) == ("APOE lipids", "2")
    assert [source.doc_id for source in result.sources] == ["pmid:34313350", "pmid:27078154"]
    first = result.sources[0]
    assert (first.origin, first.chunk_id, first.journal, first.year) == ("tool", "summary", "J Clin Lab Anal", 2021)
    assert first.doi.startswith("10.")
    assert result.content.splitlines()[0] == "PubMed search for 'APOE lipids': 2 hits; showing 2."
    assert "cite as [citation:pmid:34313350:summary]" in result.content


@pytest.mark.django_db
def test_search_pubmed_reuses_the_shared_esearch_cache(eutils, eutils_recording, esearch_for):
    from pubmed.models import EsearchCacheEntry

    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(
        esearch_for(["34313350", "27078154"]), content_type="application/json"
    )
    eutils.expect_request("/entrez/eutils/esummary.fcgi").respond_with_data(
        eutils_recording("yeliztli/esummary_pubmed_json_34313350_27078154.json"), content_type="application/json"
    )
    for call in ("toolu_1", "toolu_2"):
        result = run_tool(call_id=call, name="search_pubmed", arguments={"query": "APOE lipids", "max_results": 2})
        assert [source.doc_id for source in result.sources] == ["pmid:34313350", "pmid:27078154"]
    searches = [request for request, _ in eutils.log if request.path.endswith("esearch.fcgi")]
    assert len(searches) == 1
    assert EsearchCacheEntry.objects.get().pmids == ["34313350", "27078154"]


@pytest.mark.django_db
def test_search_pubmed_caps_results_at_the_configured_maximum(eutils, esearch_for):
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(
        esearch_for([]), content_type="application/json"
    )
    result = run_tool(
        call_id="t", name="search_pubmed", arguments={"query": "rare thing", "max_results": 20}, max_results=3
    )
    assert result.arguments == {"query": "rare thing", "max_results": 3}
    assert eutils.log[0][0].args["retmax"] == "3"
    assert result.content == "PubMed search for 'rare thing': 0 hits; showing 0."


@pytest.mark.django_db
def test_get_pubmed_article_returns_the_abstract(eutils, eutils_recording):
    eutils.expect_request("/entrez/eutils/efetch.fcgi").respond_with_data(
        eutils_recording("biomcp/efetch_pubmed_22663011.xml"), content_type="text/xml"
    )
    result = run_tool(call_id="t", name="get_pubmed_article", arguments={"pmid": "22663011"})
    assert result.content.startswith("PMID 22663011: Improved survival with MEK inhibition in BRAF-mutated melanoma.")
    assert result.sources[0].text.startswith("BACKGROUND:")
    assert result.sources[0].doc_id == "pmid:22663011"
    # The article is now stored: asking again reads it locally, with no second request to NCBI.
    again = run_tool(call_id="t2", name="get_pubmed_article", arguments={"pmid": "22663011"})
    assert again.content == result.content
    assert len(eutils.log) == 1


@pytest.mark.django_db
def test_eutils_failure_is_reported_to_the_model_not_raised(eutils):
    eutils.expect_request("/entrez/eutils/efetch.fcgi").respond_with_data("Service unavailable", status=503)
    result = run_tool(call_id="t", name="get_pubmed_article", arguments={"pmid": "22663011"})
    assert result.is_error is True
    assert result.content.startswith("get_pubmed_article failed: ")


@pytest.mark.django_db
def test_get_trial_returns_the_registry_record(eutils, settings, shared_data):
    settings.CTGOV_BASE_URL = eutils.url_for("/api/v2/")
    eutils.expect_request("/api/v2/studies/NCT02210780").respond_with_data(
        (shared_data / "ctgov" / "aact" / "study_NCT02210780.json").read_bytes(), content_type="application/json"
    )
    result = run_tool(call_id="t", name="get_trial", arguments={"nct_id": "nct02210780"})
    assert result.is_error is False, result.content
    assert result.content.startswith("Cite as [citation:nct:NCT02210780:registry]\nClinicalTrials.gov NCT02210780: ")
    assert [(source.doc_id, source.nct, source.journal) for source in result.sources] == [
        ("nct:NCT02210780", "NCT02210780", "ClinicalTrials.gov")
    ]
