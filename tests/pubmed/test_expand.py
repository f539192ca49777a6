"""Query expansion along the five axes: organ terms, per-axis caps, 5-10 queries, the database cache."""

from __future__ import annotations

from collections import Counter

import pytest

from pubmed.models import ScoutCacheEntry, ScoutCacheKind
from pubmed.services.expand import (
    AXIS_CAPS,
    MAX_QUERIES,
    MIN_QUERIES,
    DrugProfile,
    ExpandedQuery,
    ProfileError,
    apply_caps,
    expand_search_terms,
    organ_terms,
)

GEFITINIB = {
    "synonyms": ["Iressa", "ZD1839", "ZD-1839"],
    "targets": ["EGFR", "ERBB2"],
    "mechanisms": ["EGFR tyrosine kinase inhibition", "ATP-competitive kinase inhibition", "apoptosis induction"],
    "atc_codes": ["L01EB01"],
    "atc_descriptions": ["EGFR tyrosine kinase inhibitors", "protein kinase inhibitors"],
    "drug_type": "small molecule",
}


@pytest.mark.parametrize(
    ("disease", "organs"),
    [
        ("non-small cell lung cancer", ["lung"]),
        ("NSCLC", ["lung"]),
        ("hepatocellular carcinoma", ["liver"]),
        ("metastatic colorectal cancer with liver metastases", ["colon", "liver"]),
        ("BRAF-mutant melanoma", ["skin"]),
        ("type 2 diabetes mellitus", ["pancreas"]),
        ("sepsis", []),
    ],
)
def test_organ_terms_come_from_the_disease_name(disease: str, organs: list[str]) -> None:
    assert organ_terms(disease) == organs


@pytest.mark.django_db
def test_full_profile_fills_all_five_axes_within_their_caps() -> None:
    expansion = expand_search_terms(drug="gefitinib", disease="non-small cell lung cancer", profile=GEFITINIB)
    per_axis = Counter(q.axis for q in expansion.queries)
    assert len(expansion.queries) == MAX_QUERIES
    assert set(per_axis) == set(AXIS_CAPS)
    assert all(per_axis[axis] <= cap for axis, cap in AXIS_CAPS.items())
    assert expansion.per_axis == dict(per_axis)
    assert (expansion.source, expansion.organ_terms) == ("rules", ["lung"])
    assert expansion.queries[0] == ExpandedQuery(
        "drug_name", '"gefitinib"[Title/Abstract] AND "non-small cell lung cancer"[Title/Abstract]'
    )
    by_axis = {axis: [q.query for q in expansion.queries if q.axis == axis] for axis in AXIS_CAPS}
    assert by_axis["synonym"][0] == '"Iressa"[Title/Abstract] AND ("non-small cell lung cancer"[Title/Abstract] OR ' \
        '"non-small cell lung cancer"[MeSH Terms])'
    lung = ' AND "lung"[Title/Abstract]'
    assert by_axis["drug_class_organ"][0] == '"EGFR tyrosine kinase inhibitors"[Title/Abstract]' + lung
    assert by_axis["mechanism_organ"][0] == '"EGFR tyrosine kinase inhibition"[Title/Abstract]' + lung
    assert by_axis["target_gene"][0].startswith('("EGFR"[Title/Abstract] OR "ERBB2"[Title/Abstract]) AND ')
    assert len({q.query for q in expansion.queries}) == len(expansion.queries)


@pytest.mark.django_db
def test_a_bare_drug_name_still_gets_five_queries_from_the_drug_name_axis() -> None:
    expansion = expand_search_terms(drug="trametinib", disease="melanoma")
    assert len(expansion.queries) == MIN_QUERIES
    assert {q.axis for q in expansion.queries} == {"drug_name"}
    assert any('"randomized controlled trial"[Publication Type]' in q.query for q in expansion.queries)
    assert any('"efficacy"[Title/Abstract]' in q.query for q in expansion.queries)
    without_organ = expand_search_terms(drug="chemotherapy", disease="cancer")
    assert len(without_organ.queries) == MIN_QUERIES and without_organ.organ_terms == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("drug", "disease"),
    [("apixaban", "heart failure"), ("apixaban", "atrial fibrillation"), ("gefitinib", "non-small cell lung cancer")],
)
def test_every_drug_name_query_keeps_the_disease_not_only_its_organ(drug: str, disease: str) -> None:
    expansion = expand_search_terms(drug=drug, disease=disease)
    assert len(expansion.queries) == MIN_QUERIES
    assert all(f'"{disease}"[Title/Abstract]' in q.query for q in expansion.queries), expansion.queries
    organ = f'"{expansion.organ_terms[0]}"[Title/Abstract]'
    assert not any(organ in q.query for q in expansion.queries)
    assert any('"systematic review"[Publication Type]' in q.query for q in expansion.queries)


def test_caps_drop_the_extra_queries_of_an_axis_and_duplicates() -> None:
    candidates = [ExpandedQuery("target_gene", f"q{n}") for n in range(5)] + [
        ExpandedQuery("synonym", "s1"), ExpandedQuery("synonym", "s1"), ExpandedQuery("unknown", "u"),
        *[ExpandedQuery("drug_name", f"d{n}") for n in range(6)],
    ]
    kept = apply_caps(candidates)
    assert [q.query for q in kept] == ["d0", "d1", "d2", "s1", "q0", "q1"]


@pytest.mark.django_db
def test_expansions_are_cached_in_the_database_per_profile() -> None:
    first = expand_search_terms(drug="gefitinib", disease="non-small cell lung cancer", profile=GEFITINIB)
    again = expand_search_terms(drug=" Gefitinib ", disease="Non-small cell lung cancer", profile=GEFITINIB)
    assert (first.cached, again.cached) == (False, True)
    assert again.queries == first.queries
    assert ScoutCacheEntry.objects.filter(kind=ScoutCacheKind.EXPANSION).count() == 1
    other = expand_search_terms(drug="gefitinib", disease="non-small cell lung cancer", profile={"targets": ["EGFR"]})
    assert other.cached is False
    assert ScoutCacheEntry.objects.filter(kind=ScoutCacheKind.EXPANSION).count() == 2


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        ({"dose": "250 mg"}, "Unknown drug profile key(s): dose; use synonyms, targets"),
        ({"targets": "EGFR"}, None),
        ({"targets": [1, 2]}, "targets must be a list of strings."),
        ({"drug_type": ["small molecule"]}, "drug_type must be a string"),
        ({"synonyms": ["x" * 201]}, "Each synonyms entry must be at most 200 characters."),
        (["EGFR"], "The drug profile must be a JSON object"),
    ],
)
def test_profiles_are_validated_with_messages_that_say_what_to_fix(profile: object, message: str | None) -> None:
    if message is None:
        assert DrugProfile.from_value(profile).targets == ("EGFR",)  # type: ignore[arg-type]
        return
    with pytest.raises(ProfileError) as caught:
        DrugProfile.from_value(profile)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


@pytest.mark.django_db
def test_quotes_and_brackets_in_names_cannot_break_the_query() -> None:
    first = expand_search_terms(drug='pembro"lizumab[', disease="lung (cancer)").queries[0]
    assert first.query == '"pembro lizumab"[Title/Abstract] AND "lung cancer"[Title/Abstract]'


@pytest.mark.django_db
@pytest.mark.parametrize(("drug_type", "classes"), [("protein", 0), ("small molecule", 0), ("monoclonal antibody", 1)])
def test_only_a_specific_drug_type_counts_as_a_drug_class(drug_type: str, classes: int) -> None:
    expansion = expand_search_terms(drug="cetuximab", disease="colorectal cancer", profile={"drug_type": drug_type})
    assert expansion.per_axis["drug_class_organ"] == classes
