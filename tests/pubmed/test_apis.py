"""`/api/v1/abstracts/search` (anonymous) and `/api/v1/ingestions/` (authenticated)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from pubmed.models import Abstract, Ingestion, IngestionStatus
from tests.pubmed.conftest import FakeEutils

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def user(django_user_model: object) -> object:
    return django_user_model.objects.create_user("researcher", password="pw")  # type: ignore[attr-defined]


def test_anonymous_search_returns_hits(api: APIClient, eutils_dir: Path) -> None:
    call_command("load_abstracts", str(eutils_dir / "biomcp/efetch_pubmed_22663011.xml"),
                 str(eutils_dir / "pubmed-client/efetch_pubmed_xml/31978945.xml"), stdout=None)
    response = api.get("/api/v1/abstracts/search", {"q": "trametinib melanoma survival", "k": 1})
    assert response.status_code == 200
    body = response.json()
    assert (body["query"], body["k"]) == ("trametinib melanoma survival", 1)
    (hit,) = body["results"]
    assert hit["pmid"] == "22663011"
    assert hit["doc_id"] == "pmid:22663011"
    assert hit["url"] == "https://pubmed.ncbi.nlm.nih.gov/22663011/"
    assert hit["doi"] == "10.1056/NEJMoa1203421"
    filtered = api.get("/api/v1/abstracts/search/", {"q": "trametinib melanoma", "mesh": "COVID-19"}).json()
    assert [h["pmid"] for h in filtered["results"]] == ["31978945"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "q: This field is required."),
        ({"q": "   "}, "q: This field may not be blank."),
        ({"q": "x", "k": "0"}, "k: Ensure this value is greater than or equal to 1."),
        ({"q": "x", "k": "ten"}, "k: A valid integer is required."),
        ({"q": "x", "year_from": "2020", "year_to": "2010"}, "year_from: 2020 is after year_to 2010."),
    ],
)
def test_search_input_errors_use_the_error_envelope(api: APIClient, params: dict, message: str) -> None:
    response = api.get("/api/v1/abstracts/search", params)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert response.json()["error"]["message"] == message


def test_ingestions_need_authentication(api: APIClient) -> None:
    response = api.post("/api/v1/ingestions/", {"queries": ["covid"]}, format="json")
    assert response.status_code in {401, 403}
    assert response.json()["error"]["code"] in {"not_authenticated", "authentication_failed"}
    assert Ingestion.objects.count() == 0


def test_create_and_follow_an_ingestion(api: APIClient, user: object, fake_eutils: FakeEutils,
                                        django_capture_on_commit_callbacks: object,
                                        django_user_model: object) -> None:
    fake_eutils.esearch_ids = {"covid": ["31978945", "33515491"]}
    fake_eutils.serve()
    api.force_authenticate(user)
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        response = api.post("/api/v1/ingestions/", {"queries": ["covid"], "max_per_query": 5}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "pending"
    assert response["Location"] == body["url"] == f"http://testserver/api/v1/ingestions/{body['id']}/"
    progress = api.get(f"/api/v1/ingestions/{body['id']}/").json()
    assert (progress["status"], progress["progress"], progress["found"], progress["new"]) == (
        IngestionStatus.SUCCEEDED, 1.0, 2, 2)
    assert progress["pmids"] == ["31978945", "33515491"]
    assert Abstract.objects.count() == 2
    other = django_user_model.objects.create_user("someone-else", password="pw")  # type: ignore[attr-defined]
    api.force_authenticate(other)
    hidden = api.get(f"/api/v1/ingestions/{body['id']}/")
    assert hidden.status_code == 404
    assert hidden.json()["error"]["message"] == f"No ingestion {body['id']} visible to you."


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({}, "queries: This field is required."),
        ({"queries": []}, "queries: This list may not be empty."),
        ({"queries": ["   "]},
         'queries: Give at least one non-empty PubMed query, e.g. "metformin AND breast cancer".'),
        ({"queries": ["x"], "max_per_query": 501}, "max_per_query: Ensure this value is less than or equal to 500."),
    ],
)
def test_ingestion_input_errors(api: APIClient, user: object, payload: dict, message: str) -> None:
    api.force_authenticate(user)
    response = api.post("/api/v1/ingestions/", payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message
    assert Ingestion.objects.count() == 0


def test_ingestion_with_ncbi_down_is_recorded_as_failed(api: APIClient, user: object, fake_eutils: FakeEutils,
                                                         django_capture_on_commit_callbacks: object) -> None:
    fake_eutils.respond("/esearch.fcgi", "down", status=503, content_type="text/plain")
    api.force_authenticate(user)
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        response = api.post("/api/v1/ingestions/", {"queries": ["covid"]}, format="json")
    assert response.status_code == 201
    progress = api.get(response.json()["url"]).json()
    assert progress["status"] == "failed"
    assert progress["errors"][0].startswith("esearch 'covid': NCBI E-utilities esearch.fcgi failed after 4 attempts")


def test_tablizer_api_reports_pubmed_down_as_503_not_local_rows(api: APIClient, user: object,
                                                                 fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "down", status=503, content_type="text/plain")
    api.force_authenticate(user)
    response = api.get("/api/v1/tablizer/", {"q": "covid"})
    assert response.status_code == 503
    assert response.json()["error"]["message"].startswith("PubMed search failed: NCBI E-utilities esearch.fcgi")
