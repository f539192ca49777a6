"""Stage 0: query expansion along five axes and the disease-name normaliser."""

from __future__ import annotations

from collections import Counter

import pytest
from django.core.cache import cache
from werkzeug import Request, Response

from pubmed.services import expand
from pubmed.services.expand import (
    AXIS_CAPS,
    MAX_QUERIES,
    MIN_QUERIES,
    ExpandedQuery,
    ExpansionProfile,
    broaden_disease_name,
    clean_disease_name,
    expand_search_terms,
    normalise_disease_name,
    normaliser_cache_key,
)
from tests.pubmed.conftest import FakeEutils, esearch_json


def test_deterministic_expansion_covers_five_axes_within_caps() -> None:
    queries = expand_search_terms("metformin", "breast cancer")
    assert MIN_QUERIES <= len(queries) <= MAX_QUERIES
    per_axis = Counter(q.axis for q in queries)
    assert set(per_axis) == {"core", "trials", "synthesis", "mechanism", "outcomes"}
    assert all(per_axis[axis] <= cap for axis, cap in AXIS_CAPS.items())
    assert queries[0] == ExpandedQuery("core", '"metformin"[Title/Abstract] AND "breast cancer"[Title/Abstract]')
    assert any('"randomized controlled trial"[Publication Type]' in q.query for q in queries if q.axis == "trials")
    assert len({q.query for q in queries}) == len(queries)


def test_profile_synonyms_widen_the_queries_and_stay_capped() -> None:
    profile = {"drug_synonyms": ["Glucophage"], "disease_synonyms": ["breast neoplasms"], "population": "women",
               "drug_class": "biguanide", "mechanism": "AMPK activation"}
    queries = expand_search_terms("metformin", "breast cancer", profile)
    assert queries[0].query == (
        '("metformin"[Title/Abstract] OR "Glucophage"[Title/Abstract]) AND '
        '("breast cancer"[Title/Abstract] OR "breast neoplasms"[Title/Abstract])'
    )
    assert len(queries) == MAX_QUERIES
    assert Counter(q.axis for q in queries) == {"core": 3, "trials": 2, "synthesis": 1, "mechanism": 2, "outcomes": 2}
    with pytest.raises(ValueError, match="Unknown profile key"):
        expand_search_terms("metformin", "breast cancer", {"dose": "500 mg"})


def test_quotes_and_brackets_in_names_cannot_break_the_query() -> None:
    (first, *_) = expand_search_terms('pembro"lizumab[', "lung (cancer)")
    assert first.query == '"pembro lizumab"[Title/Abstract] AND "lung cancer"[Title/Abstract]'


def test_llm_expansion_is_validated_and_capped(settings: object) -> None:
    settings.LLM_PROVIDER = "anthropic"
    proposed = [("core", f"metformin AND breast cancer {n}") for n in range(6)] + [
        ("trials", "metformin trial"), ("made-up-axis", "x"), ("outcomes", "metformin survival"),
        ("synthesis", "metformin meta-analysis"), ("mechanism", "metformin AMPK"),
        ("mechanism", '(metformin AND "AMPK[tiab]'), ("outcomes", "x" * 1001),  # unbalanced, too long: dropped
    ]
    expand.register_llm_expander(lambda drug, disease, profile: proposed)
    try:
        queries = expand_search_terms("metformin", "breast cancer")
        assert Counter(q.axis for q in queries) == {"core": 3, "trials": 1, "outcomes": 1, "synthesis": 1,
                                                    "mechanism": 1}
        expand.register_llm_expander(lambda drug, disease, profile: [("core", "metformin")])
        fallback = expand_search_terms("metformin", "breast cancer")
        # too few → deterministic
        assert fallback[0].query == '"metformin"[Title/Abstract] AND "breast cancer"[Title/Abstract]'
    finally:
        expand.register_llm_expander(None)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("NSCLC", "non-small cell lung cancer"),
        ("  Crohn's Disease. ", "crohn disease"),
        ("T2DM", "type 2 diabetes mellitus"),
        ("Breast Cancer", "breast cancer"),
    ],
)
def test_clean_disease_name(raw: str, expected: str) -> None:
    assert clean_disease_name(raw) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("metastatic castration-resistant prostate cancer", "castration-resistant prostate cancer"),
     ("advanced cancer", ""), ("stage IV melanoma", "melanoma"), ("melanoma", "")],
)
def test_broadening_drops_qualifiers_but_never_ends_generic(name: str, expected: str) -> None:
    assert broaden_disease_name(name) == expected


def _counting_esearch(fake_eutils: FakeEutils, counts: dict[str, int]) -> None:
    def handler(request: Request) -> Response:
        params = fake_eutils.record(request)
        term = params["term"]
        count = next((n for name, n in counts.items() if f'"{name}"[Title/Abstract]' in term), 0)
        return Response(esearch_json(pmids=[], count=count, translation=term), content_type="application/json")

    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(handler)


def test_normaliser_accepts_a_name_pubmed_knows_and_caches_it(fake_eutils: FakeEutils) -> None:
    cache.clear()
    _counting_esearch(fake_eutils, {"non-small cell lung cancer": 90000})
    result = normalise_disease_name("NSCLC")
    assert (result.normalised, result.count, result.broadened, result.source) == (
        "non-small cell lung cancer", 90000, False, "deterministic")
    (seen,) = fake_eutils.requests("/esearch.fcgi")
    assert seen.params["term"] == (
        '("non-small cell lung cancer"[Title/Abstract] OR "non-small cell lung cancer"[MeSH Terms])'
    )
    assert seen.params["retmax"] == "0"
    assert normalise_disease_name("NSCLC") == result
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1  # cached


def test_normaliser_broadens_once_when_too_few_results(fake_eutils: FakeEutils) -> None:
    cache.clear()
    _counting_esearch(fake_eutils, {"refractory stage iv melanoma": 2, "melanoma": 150000})
    result = normalise_disease_name("Refractory stage IV melanoma")
    assert (result.normalised, result.count, result.broadened) == ("melanoma", 150000, True)
    assert result.tried == ["refractory stage iv melanoma", "melanoma"]
    assert expand.MIN_RESULTS == 3


def test_normaliser_never_broadens_to_a_generic_term(fake_eutils: FakeEutils) -> None:
    cache.clear()
    _counting_esearch(fake_eutils, {"advanced cancer": 1})
    result = normalise_disease_name("advanced cancer")
    assert (result.normalised, result.count, result.broadened) == ("advanced cancer", 1, False)
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1


def test_normaliser_uses_the_llm_answer_when_configured(fake_eutils: FakeEutils, settings: object) -> None:
    cache.clear()
    settings.LLM_PROVIDER = "anthropic"
    _counting_esearch(fake_eutils, {"hepatocellular carcinoma": 80000})
    expand.register_llm_normaliser(lambda name: "Hepatocellular Carcinoma")
    try:
        result = normalise_disease_name("liver cancer (HCC)")
    finally:
        expand.register_llm_normaliser(None)
    assert (result.normalised, result.source, result.count) == ("hepatocellular carcinoma", "llm", 80000)


def test_normaliser_survives_ncbi_outage_without_caching(fake_eutils: FakeEutils) -> None:
    cache.clear()
    fake_eutils.respond("/esearch.fcgi", "down", status=503, content_type="text/plain")
    result = normalise_disease_name("Melanoma")
    assert (result.normalised, result.count) == ("melanoma", None)
    assert cache.get(normaliser_cache_key("Melanoma")) is None


def test_profile_from_value_accepts_strings() -> None:
    assert ExpansionProfile.from_value({"drug_synonyms": "Glucophage"}).drug_synonyms == ("Glucophage",)
