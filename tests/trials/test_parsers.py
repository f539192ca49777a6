"""Parsing of every real ClinicalTrials.gov v2 response in ../shared/data/ctgov."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trials.clients import CtgovInvalidResponse
from trials.parsers import parse_search_page, parse_study, split_eligibility, unescape_markup

# What each single-study recording says, read off the files by hand. `inclusion`/`exclusion` are
# the first characters of each part after the split; None means that part is empty.
DETAIL_RECORDINGS: dict[str, dict[str, Any]] = {
    "aact/study_NCT00763412.json": {
        "nct_id": "NCT00763412",
        "overall_status": "COMPLETED",
        "phases": ["NA"],
        "lead_sponsor": "Arbelaez, Ana Maria",
        "enrollment": 31,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "12 Years",
        "maximum_age": "24 Years",
        "healthy_volunteers": False,
        "primary": 3,
        "secondary": 6,
        "locations_count": 1,
        "interventions": 2,
        "conditions": 2,
        "start_date": "2006-11",
        "completion_date": "2013-01",
        "last_update": "2017-06-05",
        "has_results": True,
        "inclusion": "* Male or females 12 -24 years old",
        "exclusion": "* Patients receiving growth hormone",
    },
    "aact/study_NCT00973089.json": {
        "nct_id": "NCT00973089",
        "overall_status": "WITHDRAWN",
        "phases": ["NA"],
        "lead_sponsor": "Hadassah Medical Organization",
        "enrollment": 0,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "5 Years",
        "maximum_age": "8 Years",
        "healthy_volunteers": True,
        "primary": 1,
        "secondary": 0,
        "locations_count": 1,
        "interventions": 1,
        "conditions": 1,
        "start_date": "2010-05",
        "completion_date": "2015-03",
        "last_update": "2015-08-19",
        "has_results": False,
        "inclusion": "* Healthy children",
        "exclusion": "* Subjects that are not ASA I",
    },
    "aact/study_NCT02210780.json": {
        "nct_id": "NCT02210780",
        "overall_status": "COMPLETED",
        "phases": ["PHASE2"],
        "lead_sponsor": "Regeneron Pharmaceuticals",
        "enrollment": 194,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "64 Years",
        "healthy_volunteers": False,
        "primary": 1,
        "secondary": 10,
        "locations_count": 42,
        "interventions": 2,
        "conditions": 1,
        "start_date": "2014-08-05",
        "completion_date": "2015-09-15",
        "last_update": "2020-05-07",
        "has_results": True,
        "inclusion": "1. Male or female adults ages 18 to 64 years",
        "exclusion": "1. Prior treatment with dupilumab",
    },
    "aact/study_NCT02552212.json": {
        "nct_id": "NCT02552212",
        "overall_status": "COMPLETED",
        "phases": ["PHASE3"],
        "lead_sponsor": "UCB BIOSCIENCES GmbH",
        "enrollment": 317,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "",
        "healthy_volunteers": False,
        "primary": 11,
        "secondary": 20,
        "locations_count": 105,
        "interventions": 2,
        "conditions": 3,
        "start_date": "2015-09",
        "completion_date": "2020-05",
        "last_update": "2022-08-18",
        "has_results": True,
        "inclusion": "* At least 18 years old",
        "exclusion": "* Diagnosis of AS or any other",
    },
    "aact/study_NCT03418623.json": {
        "nct_id": "NCT03418623",
        "overall_status": "COMPLETED",
        "phases": ["PHASE2"],
        "lead_sponsor": "Laboratorio Farmaceutico Ct S.r.l.",
        "enrollment": 24,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "21 Years",
        "maximum_age": "40 Years",
        "healthy_volunteers": False,
        "primary": 1,
        "secondary": 2,
        "locations_count": 1,
        "interventions": 2,
        "conditions": 1,
        "start_date": "2018-03-08",
        "completion_date": "2020-03-13",
        "last_update": "2020-10-08",
        "has_results": False,
        "inclusion": "1. Male participants...",
        "exclusion": None,
    },
    "aact/study_NCT03475563.json": {
        "nct_id": "NCT03475563",
        "overall_status": "UNKNOWN",
        "phases": [],
        "lead_sponsor": "Hospital Universitari Vall d'Hebron Research Institute",
        "enrollment": 100,
        "enrollment_type": "ESTIMATED",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "",
        "healthy_volunteers": False,
        "primary": 3,
        "secondary": 4,
        "locations_count": 3,
        "interventions": 1,
        "conditions": 1,
        "start_date": "2018-08-16",
        "completion_date": "2019-12-30",
        "last_update": "2019-11-27",
        "has_results": False,
        "inclusion": "* Age over 18 years.",
        "exclusion": "* Express rejection of the patient",
    },
    "aact/study_NCT03630471.json": {
        "nct_id": "NCT03630471",
        "overall_status": "COMPLETED",
        "phases": ["NA"],
        "lead_sponsor": "Sangath",
        "enrollment": 250,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "13 Years",
        "maximum_age": "20 Years",
        "healthy_volunteers": False,
        "primary": 2,
        "secondary": 9,
        "locations_count": 1,
        "interventions": 2,
        "conditions": 1,
        "start_date": "2018-08-20",
        "completion_date": "2019-02-28",
        "last_update": "2019-05-21",
        "has_results": False,
        # Headed "Eligibility criteria:" rather than "Inclusion Criteria:".
        "inclusion": "For adolescent participants:\n\n* Enrolled as a student",
        "exclusion": "For adolescent participants:\n\n* Requiring urgent medical attention",
    },
    "aact/study_NCT04207047.json": {
        "nct_id": "NCT04207047",
        "overall_status": "UNKNOWN",
        "phases": ["NA"],
        "lead_sponsor": "LUTRONIC Corporation",
        "enrollment": 3,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "",
        "healthy_volunteers": True,
        "primary": 1,
        "secondary": 1,
        "locations_count": 1,
        "interventions": 5,
        "conditions": 1,
        "start_date": "2018-10-02",
        "completion_date": "2020-03-31",
        "last_update": "2019-12-20",
        "has_results": False,
        "inclusion": "1. Male or female, age 18 years and older.",
        "exclusion": "1. Poorly controlled medical condition",
    },
    "aact/study_NCT05594173.json": {
        "nct_id": "NCT05594173",
        "overall_status": "COMPLETED",
        "phases": [],
        "lead_sponsor": "University Health Network, Toronto",
        "enrollment": 20,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "60 Years",
        "healthy_volunteers": True,
        "primary": 2,
        "secondary": 0,
        "locations_count": 1,
        "interventions": 1,
        "conditions": 1,
        "start_date": "2019-09-13",
        "completion_date": "2020-12-20",
        "last_update": "2022-11-21",
        "has_results": True,
        "inclusion": "* Healthy adults under age 60",
        "exclusion": "* prior history of swallowing",
    },
    "aact/study_NCT06171568.json": {
        "nct_id": "NCT06171568",
        "overall_status": "NOT_YET_RECRUITING",
        "phases": [],
        "lead_sponsor": "Assistance Publique - Hôpitaux de Paris",
        "enrollment": 400,
        "enrollment_type": "ESTIMATED",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "",
        "healthy_volunteers": False,
        "primary": 1,
        "secondary": 7,
        "locations_count": 1,
        "interventions": 1,
        "conditions": 1,
        "start_date": "2024-02-01",
        "completion_date": "2025-02-01",
        "last_update": "2023-12-14",
        "has_results": False,
        "inclusion": "* Patient over 18 years...",
        "exclusion": None,
    },
    # The biomcp GETs were requested with fields=: no outcomes, no last update, no hasResults.
    "biomcp/get_nct02576665_20260811.json": {
        "nct_id": "NCT02576665",
        "overall_status": "TERMINATED",
        "phases": ["PHASE1"],
        "lead_sponsor": "Tocagen Inc.",
        "enrollment": 21,
        "enrollment_type": "",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "75 Years",
        "healthy_volunteers": None,
        "primary": 0,
        "secondary": 0,
        "locations_count": 3,
        "interventions": 2,
        "conditions": 12,
        "start_date": "2016-07",
        "completion_date": "2019-12-20",
        "last_update": "",
        "has_results": False,
        "inclusion": "1. Patient has given written informed consent.",
        "exclusion": "1. Patient has a history of other malignancy",
    },
    "biomcp/get_nct06382129_20260811.json": {
        "nct_id": "NCT06382129",
        "overall_status": "ACTIVE_NOT_RECRUITING",
        "phases": ["PHASE3"],
        "lead_sponsor": "Sichuan Baili Pharmaceutical Co., Ltd.",
        "enrollment": 698,
        "enrollment_type": "",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "",
        "healthy_volunteers": None,
        "primary": 0,
        "secondary": 0,
        "locations_count": None,
        "interventions": 2,
        "conditions": 1,
        "start_date": "2024-05-17",
        "completion_date": "2026-12",
        "last_update": "",
        "has_results": False,
        "inclusion": "1. Voluntarily sign the informed consent",
        "exclusion": "1. Previous histological or cytological evidence of small cell",
    },
    "biomcp/get_nct06604689_20260811.json": {
        "nct_id": "NCT06604689",
        "overall_status": "RECRUITING",
        "phases": [],
        "lead_sponsor": "Fudan University",
        "enrollment": 800,
        "enrollment_type": "",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "",
        "healthy_volunteers": None,
        "primary": 0,
        "secondary": 0,
        "locations_count": None,
        "interventions": 1,
        "conditions": 2,
        "start_date": "2024-09-30",
        "completion_date": "2025-10-01",
        "last_update": "",
        "has_results": False,
        "inclusion": "* Pathologically confirmed non-small cell lung cancer;",
        "exclusion": "* Multiple primary or metastatic tumors",
    },
    # A search response carrying one complete record with results (ACTT-1).
    "biomcp/search_full_NCT04280705_with_results.json": {
        "nct_id": "NCT04280705",
        "overall_status": "COMPLETED",
        "phases": ["PHASE3"],
        "lead_sponsor": "National Institute of Allergy and Infectious Diseases (NIAID)",
        "enrollment": 1062,
        "enrollment_type": "ACTUAL",
        "sex": "ALL",
        "minimum_age": "18 Years",
        "maximum_age": "99 Years",
        "healthy_volunteers": False,
        "primary": 4,
        "secondary": 39,
        "locations_count": 60,
        "interventions": 2,
        "conditions": 1,
        "start_date": "2020-02-21",
        "completion_date": "2020-05-21",
        "last_update": "2022-03-14",
        "has_results": True,
        "inclusion": "1. Admitted to a hospital with symptoms suggestive of COVID-19",
        "exclusion": "1. Alanine Transaminase (ALT) or Aspartate Transaminase (AST)",
    },
}

# Search pages: NCT ids in order, totalCount, nextPageToken.
SEARCH_RECORDINGS: dict[str, tuple[list[str], int | None, str | None]] = {
    "biomcp/search_age_count_20260811.json": (
        ["NCT01595035"],
        598101,
        "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd6-r3_cfnzeRvfE",
    ),
    "biomcp/search_full_NCT04280705_with_results.json": (["NCT04280705"], None, "NF0g5JCEk_IgxQc"),
    "biomcp/search_keytruda_limit3_20260811.json": (
        ["NCT05431270", "NCT03590054", "NCT04795661"],
        2924,
        "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4YnzmVtA",
    ),
    "biomcp/search_melanoma_recruiting_limit3_20260811.json": (
        ["NCT06970236", "NCT04114136", "NCT04318717"],
        480,
        "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4ZmTmRvvE",
    ),
    "biomcp/search_nsclc_egfr_l858r_20260811.json": (["NCT06382129", "NCT06604689"], 2, None),
    "biomcp/search_phelan_limit50_20260811.json": (["NCT02710084", "NCT05105685", "NCT01525901"], 3, None),
    "biomcp/search_phelan_limit5_20260811.json": (
        ["NCT02710084", "NCT05105685", "NCT01525901", "NCT03493607", "NCT07119606"],
        21,
        "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw",
    ),
    "biomcp/search_phelan_next_20260811.json": (
        ["NCT05187377", "NCT03836300", "NCT07014020", "NCT05025241", "NCT07281079"],
        None,
        "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4bmjeauvk_IQ",
    ),
}
NOT_STUDY_RESPONSES = {"aact/studies_metadata_v2.json", "biomcp/openapi_ctgov_v2.0.3.yaml"}


def _load(ctgov_dir: Path, name: str) -> dict[str, Any]:
    return json.loads((ctgov_dir / name).read_text(encoding="utf-8"))


def test_the_tables_cover_every_recorded_response(ctgov_dir: Path) -> None:
    on_disk = {str(path.relative_to(ctgov_dir)) for path in ctgov_dir.glob("*/*") if path.is_file()}
    assert on_disk == set(DETAIL_RECORDINGS) | set(SEARCH_RECORDINGS) | NOT_STUDY_RESPONSES


@pytest.mark.parametrize("name", sorted(DETAIL_RECORDINGS))
def test_study_record_parses_to_the_recorded_values(ctgov_dir: Path, name: str) -> None:
    body = _load(ctgov_dir, name)
    study = body["studies"][0] if "studies" in body else body
    expected = DETAIL_RECORDINGS[name]

    trial = parse_study(study)

    assert trial.nct_id == expected["nct_id"]
    assert trial.brief_title == study["protocolSection"]["identificationModule"]["briefTitle"]
    for key in (
        "overall_status",
        "phases",
        "lead_sponsor",
        "enrollment",
        "enrollment_type",
        "sex",
        "minimum_age",
        "maximum_age",
        "healthy_volunteers",
        "locations_count",
        "start_date",
        "completion_date",
        "last_update",
        "has_results",
    ):
        assert getattr(trial, key) == expected[key], key
    assert len(trial.primary_outcomes) == expected["primary"]
    assert len(trial.secondary_outcomes) == expected["secondary"]
    assert len(trial.interventions) == expected["interventions"]
    assert len(trial.conditions) == expected["conditions"]
    assert all(item["name"] for item in trial.interventions)
    assert trial.eligibility_criteria.startswith(("Inclusion", "Key Inclusion", "Eligibility"))
    if expected["inclusion"] is None:
        assert trial.inclusion_criteria == ""
    else:
        assert trial.inclusion_criteria.startswith(expected["inclusion"])
    if expected["exclusion"] is None:
        assert trial.exclusion_criteria == ""
    else:
        assert trial.exclusion_criteria.startswith(expected["exclusion"])


def test_full_record_keeps_outcome_measure_description_and_time_frame(ctgov_dir: Path) -> None:
    trial = parse_study(_load(ctgov_dir, "aact/study_NCT02210780.json"))

    [outcome] = trial.primary_outcomes
    assert outcome["measure"] == (
        "Percentage of Participants With a Positive Response (≥4-Fold Increase) to Tetanus Toxoid "
        "(the Adacel [Tdap] Vaccine) at Week 16"
    )
    assert outcome["time_frame"] == "Week 16"
    assert outcome["description"].startswith("A positive response was defined as a ≥ 4-fold increase")
    assert outcome["description"].endswith("no formal statistical hypothesis between groups was performed.")
    assert len(outcome["description"]) == 511
    assert trial.interventions == [
        {"type": "DRUG", "name": "Dupilumab"},
        {"type": "DRUG", "name": "Placebo"},
    ]


def test_indented_exclusion_heading_inside_a_list_item_does_not_split_the_criteria(ctgov_dir: Path) -> None:
    body = _load(ctgov_dir, "biomcp/search_full_NCT04280705_with_results.json")

    trial = parse_study(body["studies"][0])

    # The record has "      Exclusion Criteria:" inside inclusion item 5; the real heading comes later.
    assert "8. Agrees to not participate in another clinical trial" in trial.inclusion_criteria
    assert trial.exclusion_criteria.endswith("5. Allergy to any study medication.")
    assert "Illness of any duration" not in trial.exclusion_criteria


@pytest.mark.parametrize("name", sorted(SEARCH_RECORDINGS))
def test_search_page_parses_ids_total_and_next_token(ctgov_dir: Path, name: str) -> None:
    nct_ids, total, token = SEARCH_RECORDINGS[name]

    page = parse_search_page(_load(ctgov_dir, name))

    assert [study.nct_id for study in page.studies] == nct_ids
    assert page.total_count == total
    assert page.next_page_token == token
    assert all(study.brief_title and study.overall_status for study in page.studies)


def test_search_row_carries_what_the_results_table_shows(ctgov_dir: Path) -> None:
    page = parse_search_page(_load(ctgov_dir, "biomcp/search_phelan_limit5_20260811.json"))

    first, second = page.studies[:2]
    assert first.brief_title == "Piloting Treatment With Intranasal Oxytocin in Phelan-McDermid Syndrome"
    assert (first.phases, first.overall_status, first.lead_sponsor, first.enrollment) == (
        ["PHASE2"],
        "COMPLETED",
        "Alexander Kolevzon",
        18,
    )
    assert first.conditions == ["Phelan-McDermid Syndrome"]
    assert first.interventions == [{"type": "", "name": "Oxytocin"}, {"type": "", "name": "Saline"}]
    assert (first.start_date, first.completion_date) == ("2016-04-29", "2020-07-29")
    assert second.phases == ["PHASE1", "PHASE2"]


def test_record_with_only_an_nct_id_parses_to_empty_values() -> None:
    trial = parse_study({"protocolSection": {"identificationModule": {"nctId": "NCT00000102"}}})

    assert trial.nct_id == "NCT00000102"
    assert trial.model_fields() == {
        "nct_id_aliases": [],
        "brief_title": "",
        "official_title": "",
        "brief_summary": "",
        "study_type": "",
        "phases": [],
        "overall_status": "",
        "lead_sponsor": "",
        "enrollment": None,
        "enrollment_type": "",
        "conditions": [],
        "interventions": [],
        "eligibility_criteria": "",
        "inclusion_criteria": "",
        "exclusion_criteria": "",
        "minimum_age": "",
        "maximum_age": "",
        "sex": "",
        "healthy_volunteers": None,
        "primary_outcomes": [],
        "secondary_outcomes": [],
        "start_date": "",
        "completion_date": "",
        "locations_count": None,
        "last_update": "",
        "has_results": False,
    }


def test_values_of_the_wrong_type_are_dropped_not_trusted() -> None:
    study = {
        "protocolSection": {
            "identificationModule": {
                "nctId": "NCT00000102",
                "briefTitle": 5,
                "nctIdAliases": ["NCT00000001", "x"],
            },
            "designModule": {"phases": "PHASE2", "enrollmentInfo": {"count": "12"}},
            "conditionsModule": {"conditions": ["Asthma", None, "  "]},
            "armsInterventionsModule": {"interventions": [{"type": "DRUG"}, "aspirin", {"name": "Aspirin"}]},
            "outcomesModule": {"primaryOutcomes": [{"timeFrame": "1 year"}, {"measure": "FEV1"}]},
            "eligibilityModule": {"healthyVolunteers": "yes"},
            "contactsLocationsModule": {"locations": "many"},
        },
        "hasResults": "true",
    }

    trial = parse_study(study)

    assert trial.brief_title == ""
    assert trial.nct_id_aliases == ["NCT00000001"]
    assert trial.phases == []
    assert trial.enrollment is None
    assert trial.conditions == ["Asthma"]
    assert trial.interventions == [{"type": "", "name": "Aspirin"}]
    assert trial.primary_outcomes == [{"measure": "FEV1", "description": "", "time_frame": ""}]
    assert trial.healthy_volunteers is None
    assert trial.locations_count == 0
    assert trial.has_results is False


@pytest.mark.parametrize(
    ("study", "message"),
    [
        ({}, "ClinicalTrials.gov returned a study without a valid NCT id (got 'none')."),
        (
            {"protocolSection": {"identificationModule": {"nctId": "NCT123"}}},
            "ClinicalTrials.gov returned a study without a valid NCT id (got 'NCT123').",
        ),
    ],
)
def test_record_without_a_valid_nct_id_is_rejected(study: dict[str, Any], message: str) -> None:
    with pytest.raises(CtgovInvalidResponse) as caught:
        parse_study(study)
    assert str(caught.value) == message


def test_search_page_skips_a_study_without_nct_id(ctgov_dir: Path) -> None:
    body = _load(ctgov_dir, "biomcp/search_keytruda_limit3_20260811.json")
    del body["studies"][1]["protocolSection"]["identificationModule"]["nctId"]

    page = parse_search_page(body)

    assert [study.nct_id for study in page.studies] == ["NCT05431270", "NCT04795661"]
    assert page.total_count == 2924


@pytest.mark.parametrize(
    ("criteria", "inclusion", "exclusion"),
    [
        ("Inclusion Criteria:\n\n* a\n\nExclusion Criteria:\n\n* b", "* a", "* b"),
        ("Key Inclusion Criteria:\n1. a\nKey Exclusion Criteria:\n1. b", "1. a", "1. b"),
        ("INCLUSION CRITERIA\n- a\nEXCLUSION CRITERIA\n- b", "- a", "- b"),
        ("**Inclusion Criteria:**\n* a\n**Exclusion Criteria:**\n* b", "* a", "* b"),
        ("Eligibility criteria:\n* a\nExclusion criteria:\n* b", "* a", "* b"),
        ("Inclusion criteria for parents:\n* a\nExclusion criteria for parents:\n* b", "* a", "* b"),
        ("Inclusion Criteria:\n* a", "* a", ""),
        ("* a\n\nExclusion Criteria:\n* b", "* a", "* b"),
        ("* adults with asthma", "", ""),
        (
            "Inclusion Criteria:\n* a\n   Exclusion Criteria:\n* still a\nExclusion Criteria:\n* b",
            "* a\n   Exclusion Criteria:\n* still a",
            "* b",
        ),
        (
            "Inclusion Criteria:\n* meets ASAS criteria for axSpA\n* not all inclusion/ exclusion criteria are listed",
            "* meets ASAS criteria for axSpA\n* not all inclusion/ exclusion criteria are listed",
            "",
        ),
    ],
)
def test_split_eligibility(criteria: str, inclusion: str, exclusion: str) -> None:
    assert split_eligibility(criteria) == (inclusion, exclusion)


_bullets = st.lists(
    st.text(st.characters(blacklist_categories=["Cs", "Cc", "Zl", "Zp"]), min_size=1, max_size=40).map(
        lambda text: "* " + text
    ),
    min_size=1,
    max_size=6,
).map("\n".join)


@given(inclusion=_bullets, exclusion=_bullets)
def test_split_eligibility_recovers_both_bullet_lists(inclusion: str, exclusion: str) -> None:
    criteria = f"Inclusion Criteria:\n\n{inclusion}\n\nExclusion Criteria:\n\n{exclusion}"

    assert split_eligibility(criteria) == (inclusion.strip(), exclusion.strip())


def test_unescape_markup_removes_markdown_backslash_escapes() -> None:
    assert unescape_markup(r"SpO2 \< / = 94%, eGFR \>30, \[Eichenfeld 2004\], a\\b") == (
        r"SpO2 < / = 94%, eGFR >30, [Eichenfeld 2004], a\b"
    )
