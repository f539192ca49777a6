"""`/api/v1/trials/`: anonymous reads, validation errors as 400 JSON, upstream failures as 502/503 JSON."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
from drf_spectacular.generators import SchemaGenerator
from pytest_httpserver import HTTPServer
from rest_framework.test import APIClient

from tests.trials.factories import TrialFactory
from trials import api_urls
from trials.clients import SEARCH_FIELDS
from trials.constants import NO_CRITERIA_MESSAGE

pytestmark = pytest.mark.django_db

JSON = "application/json"
SEARCH_URL = "/api/v1/trials/search"
PHELAN_TOKEN = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw"


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def test_anonymous_search_returns_results_total_and_next(
    api: APIClient, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_phelan_limit5_20260811.json"), content_type=JSON
    )

    response = api.get(SEARCH_URL, {"condition": "Phelan-McDermid Syndrome", "page_size": 5})

    assert response.status_code == 200
    body = response.json()
    assert sorted(body) == ["next", "next_page_token", "results", "total_count"]
    assert (body["total_count"], body["next_page_token"]) == (21, PHELAN_TOKEN)
    next_url = urlsplit(body["next"])
    assert (next_url.scheme, next_url.netloc, next_url.path) == ("http", "testserver", SEARCH_URL)
    assert parse_qs(next_url.query) == {
        "condition": ["Phelan-McDermid Syndrome"],
        "page_size": ["5"],
        "page_token": [PHELAN_TOKEN],
    }
    assert [row["nct_id"] for row in body["results"]] == [
        "NCT02710084",
        "NCT05105685",
        "NCT01525901",
        "NCT03493607",
        "NCT07119606",
    ]
    assert body["results"][1] == {
        "nct_id": "NCT05105685",
        "url": "https://clinicaltrials.gov/study/NCT05105685",
        "brief_title": body["results"][1]["brief_title"],
        "phases": ["PHASE1", "PHASE2"],
        "phase_label": "Phase 1/Phase 2",
        "overall_status": body["results"][1]["overall_status"],
        "status_label": body["results"][1]["status_label"],
        "study_type": "INTERVENTIONAL",
        "lead_sponsor": body["results"][1]["lead_sponsor"],
        "enrollment": 6,
        "conditions": body["results"][1]["conditions"],
        "interventions": body["results"][1]["interventions"],
        "start_date": body["results"][1]["start_date"],
        "completion_date": body["results"][1]["completion_date"],
    }
    assert body["results"][0]["lead_sponsor"] == "Alexander Kolevzon"
    assert body["results"][0]["status_label"] == "Completed"
    assert [request.args.to_dict() for request, _ in ctgov.log] == [
        {
            "format": "json",
            "pageSize": "5",
            "query.cond": "Phelan-McDermid Syndrome",
            "fields": ",".join(SEARCH_FIELDS),
            "countTotal": "true",
        }
    ]


def test_next_link_fetches_the_second_page_with_the_same_criteria(
    api: APIClient, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_phelan_next_20260811.json"), content_type=JSON
    )

    response = api.get(
        SEARCH_URL, {"condition": "Phelan-McDermid Syndrome", "page_size": 5, "page_token": PHELAN_TOKEN}
    )

    body = response.json()
    assert response.status_code == 200
    assert body["total_count"] is None
    assert body["results"][0]["nct_id"] == "NCT05187377"
    assert ctgov.log[0][0].args["pageToken"] == PHELAN_TOKEN
    assert "countTotal" not in ctgov.log[0][0].args


def test_last_page_has_no_next(api: APIClient, ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_nsclc_egfr_l858r_20260811.json"), content_type=JSON
    )

    body = api.get(SEARCH_URL, {"condition": "non-small cell lung cancer", "q": "EGFR L858R"}).json()

    assert (body["total_count"], body["next_page_token"], body["next"]) == (2, None, None)
    assert [row["nct_id"] for row in body["results"]] == ["NCT06382129", "NCT06604689"]


@pytest.mark.parametrize(
    "query",
    ["phase=PHASE2&phase=PHASE3", "phase=PHASE3,PHASE2", "phase=phase2&phase=PHASE3,PHASE2"],
)
def test_phases_repeated_or_comma_separated_build_the_same_request(
    api: APIClient, ctgov: HTTPServer, recording: Callable[[str], bytes], query: str
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_keytruda_limit3_20260811.json"), content_type=JSON
    )

    response = api.get(f"{SEARCH_URL}?intervention=Keytruda&status=RECRUITING,COMPLETED&{query}&sponsor=Merck")

    assert response.status_code == 200
    args = ctgov.log[0][0].args
    assert args["filter.advanced"] == "AREA[Phase](PHASE2 OR PHASE3)"
    assert args["filter.overallStatus"] == "RECRUITING,COMPLETED"
    assert (args["query.intr"], args["query.lead"]) == ("Keytruda", "Merck")


def test_search_with_a_trailing_slash_works_too(api: APIClient, ctgov: HTTPServer, recording) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_keytruda_limit3_20260811.json"), content_type=JSON
    )

    assert api.get(SEARCH_URL + "/", {"intervention": "Keytruda"}).status_code == 200


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({}, NO_CRITERIA_MESSAGE),
        ({"condition": "  "}, NO_CRITERIA_MESSAGE),
        (
            {"condition": "asthma", "phase": "PHASE9"},
            "phase: PHASE9 is not a phase; use one or more of EARLY_PHASE1, PHASE1, PHASE2, PHASE3, PHASE4, NA.",
        ),
        (
            {"condition": "asthma", "status": "OPEN,CLOSED"},
            "status: OPEN, CLOSED are not overall status; use one or more of RECRUITING, ACTIVE_NOT_RECRUITING, "
            "COMPLETED, NOT_YET_RECRUITING, TERMINATED, WITHDRAWN, SUSPENDED, ENROLLING_BY_INVITATION, UNKNOWN, "
            "WITHHELD, AVAILABLE, NO_LONGER_AVAILABLE, TEMPORARILY_NOT_AVAILABLE, APPROVED_FOR_MARKETING.",
        ),
        ({"condition": "asthma", "page_size": "0"}, "page_size: Ensure this value is greater than or equal to 1."),
        ({"condition": "asthma", "page_size": "101"}, "page_size: Ensure this value is less than or equal to 100."),
        ({"condition": "asthma", "sort": "newest"}, 'sort: "newest" is not a valid choice.'),
        (
            {"condition": "asthma", "page_token": "a b"},
            "page_token: page_token must be the next_page_token of a previous search, unchanged.",
        ),
        ({"condition": "a" * 301}, "condition: Ensure this field has no more than 300 characters."),
    ],
)
def test_invalid_search_is_400_json_and_asks_nothing(
    api: APIClient, ctgov: HTTPServer, query: dict, message: str
) -> None:
    response = api.get(SEARCH_URL, query)

    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("invalid", message)
    assert ctgov.log == []


@pytest.mark.parametrize(
    ("status", "body", "content_type", "expected_status", "code", "message"),
    [
        (
            503,
            "Service Unavailable",
            "text/plain",
            503,
            "upstream_unavailable",
            "ClinicalTrials.gov is failing (HTTP 503) (3 attempts); try again in a few minutes.",
        ),
        (
            429,
            "Too Many Requests",
            "text/plain",
            503,
            "upstream_unavailable",
            "ClinicalTrials.gov is rate-limiting MedCite (HTTP 429) (3 attempts); try again in a few minutes.",
        ),
        (
            200,
            "<html>maintenance</html>",
            "text/html",
            502,
            "upstream_error",
            "ClinicalTrials.gov answered the study search with something that is not JSON (text/html).",
        ),
        (
            # No real ClinicalTrials.gov 400 body was captured; the OpenAPI document says text/plain.
            400,
            "Invalid query.cond: unbalanced parentheses",
            "text/plain",
            400,
            "invalid_query",
            "ClinicalTrials.gov rejected the request for the study search: Invalid query.cond: unbalanced parentheses",
        ),
    ],
)
def test_upstream_failure_is_json_with_a_clear_message(
    api: APIClient,
    ctgov: HTTPServer,
    status: int,
    body: str,
    content_type: str,
    expected_status: int,
    code: str,
    message: str,
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(body, status=status, content_type=content_type)

    response = api.get(SEARCH_URL, {"condition": "(melanoma"})

    assert response.status_code == expected_status
    assert response.json() == {"error": {"code": code, "message": message}}


def test_anonymous_trial_detail_returns_the_payload(
    api: APIClient, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    ctgov.expect_request("/api/v2/studies/NCT02576665").respond_with_data(
        recording("biomcp/get_nct02576665_20260811.json"), content_type=JSON
    )

    response = api.get("/api/v1/trials/NCT02576665/")

    assert response.status_code == 200
    body = response.json()
    assert (body["type"], body["nct_id"], body["overall_status"], body["phase_label"]) == (
        "trial_details",
        "NCT02576665",
        "TERMINATED",
        "Phase 1",
    )
    assert (body["lead_sponsor"], body["enrollment"], body["locations_count"]) == ("Tocagen Inc.", 21, 3)
    assert len(body["conditions"]) == 12
    assert body["eligibility"]["inclusion"].startswith("1. Patient has given written informed consent.")
    assert body["eligibility"]["maximum_age"] == "75 Years"


def test_trial_detail_from_cache_makes_no_request(api: APIClient, ctgov: HTTPServer) -> None:
    TrialFactory(nct_id="NCT02576665", brief_title="Cached")

    response = api.get("/api/v1/trials/NCT02576665/")

    assert (response.status_code, response.json()["brief_title"]) == (200, "Cached")
    assert ctgov.log == []


@pytest.mark.parametrize(
    ("path", "ctgov_status", "expected_status", "code", "message"),
    [
        (
            "NCT123",
            None,
            400,
            "invalid_nct",
            "'NCT123' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951.",
        ),
        (
            "NCT99999999",
            404,
            404,
            "not_found",
            "ClinicalTrials.gov has no study NCT99999999; check the NCT number.",
        ),
        (
            "NCT06604689",
            503,
            503,
            "upstream_unavailable",
            "ClinicalTrials.gov is failing (HTTP 503) (3 attempts); try again in a few minutes.",
        ),
    ],
)
def test_trial_detail_errors_are_json(
    api: APIClient,
    ctgov: HTTPServer,
    path: str,
    ctgov_status: int | None,
    expected_status: int,
    code: str,
    message: str,
) -> None:
    if ctgov_status is not None:
        ctgov.expect_request(f"/api/v2/studies/{path}").respond_with_data("", status=ctgov_status)

    response = api.get(f"/api/v1/trials/{path}/")

    assert response.status_code == expected_status
    assert response.json() == {"error": {"code": code, "message": message}}
    if ctgov_status is None:
        assert ctgov.log == []


def test_anonymous_reads_are_throttled(api: APIClient, ctgov: HTTPServer, settings) -> None:
    settings.CTGOV_API_ANON_RATE = "2/min"
    TrialFactory(nct_id="NCT02576665")

    statuses = [api.get("/api/v1/trials/NCT02576665/").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    error = api.get("/api/v1/trials/NCT02576665/").json()["error"]
    assert error["code"] == "throttled"
    assert error["message"].startswith("Request was throttled. Expected available in ")


def test_signed_in_users_are_not_held_to_the_anonymous_rate(
    api: APIClient, ctgov: HTTPServer, settings, django_user_model
) -> None:
    settings.CTGOV_API_ANON_RATE = "1/min"
    TrialFactory(nct_id="NCT02576665")
    api.force_authenticate(django_user_model.objects.create_user("reader", password="x" * 12))

    assert [api.get("/api/v1/trials/NCT02576665/").status_code for _ in range(3)] == [200, 200, 200]


def test_openapi_schema_documents_both_endpoints() -> None:
    schema = SchemaGenerator(patterns=api_urls.urlpatterns).get_schema(request=None, public=True)

    assert {"/trials/search", "/trials/{nct_id}/"} <= set(schema["paths"])
    assert "/trials/search/" not in schema["paths"]
    parameters = {param["name"] for param in schema["paths"]["/trials/search"]["get"]["parameters"]}
    assert {"condition", "intervention", "sponsor", "q", "phase", "status", "sort", "page_token", "page_size"} <= (
        parameters
    )
    assert set(schema["paths"]["/trials/{nct_id}/"]["get"]["responses"]) == {"200", "400", "404", "502", "503"}
