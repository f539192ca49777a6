"""`POST /api/v1/claims/check`: per-sentence results for authenticated callers, JSON errors for bad input."""

from __future__ import annotations

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from pubmed.models import Abstract
from tests.evidence.checker import (
    NOT_FOUND,
    QUOTED,
    SUPPORTED,
    TRAMETINIB,
    UNCITED,
    UNKNOWN,
    UNRELATED,
    stored_trametinib,  # noqa: F401  (fixture)
)
from tests.factories import UserFactory
from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    FakeEutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)

pytestmark = pytest.mark.django_db

URL = "/api/v1/claims/check"


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    user = UserFactory(username="dr-checker")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_each_sentence_comes_back_with_status_links_and_quotes(
    api: APIClient, stored_trametinib: Abstract, fake_eutils: FakeEutils  # noqa: F811
) -> None:
    fake_eutils.serve()
    response = api.post(URL, {"text": f"{SUPPORTED} {UNRELATED}\n{UNCITED} {NOT_FOUND}"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert [s["status"] for s in body["sentences"]] == [
        "supported", "not_supported", "no_citation", "identifier_not_found"
    ]
    first = body["sentences"][0]
    assert set(first) == {"text", "identifiers", "status", "quotes", "reason", "score"}
    assert first["text"] == SUPPORTED
    assert first["identifiers"] == [{
        "kind": "pmid",
        "value": TRAMETINIB,
        "label": f"PMID {TRAMETINIB}",
        "url": f"https://pubmed.ncbi.nlm.nih.gov/{TRAMETINIB}/",
        "found": True,
        "available": True,
        "title": "Improved survival with MEK inhibition in BRAF-mutated melanoma.",
        "retracted": False,
    }]
    assert first["quotes"] == [{"identifier": f"PMID {TRAMETINIB}", "text": f"{QUOTED}."}]
    assert body["sentences"][3]["identifiers"][0]["found"] is False
    assert body["sentences"][3]["reason"] == f"PMID {UNKNOWN} is not found in PubMed or the library."
    assert body["counts"] == {
        "supported": 1, "contradicted": 0, "not_supported": 1, "identifier_not_found": 1,
        "source_unavailable": 0, "no_citation": 1,
    }


def test_the_slashed_address_answers_too(api: APIClient, stored_trametinib: Abstract) -> None:  # noqa: F811
    response = api.post(URL + "/", {"text": SUPPORTED}, format="json")
    assert response.status_code == 200
    assert response.json()["sentences"][0]["status"] == "supported"


def test_anonymous_callers_are_refused_with_the_error_envelope() -> None:
    response = APIClient().post(URL, {"text": SUPPORTED}, format="json")
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "not_authenticated", "message": "Authentication credentials were not provided."}
    }


@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        ({"text": ""}, 400, "empty_text", "The text is empty: paste sentences that cite PMIDs, DOIs or NCT numbers."),
        ({"text": "Apixaban lowers stroke risk."}, 400, "no_identifiers",
         "The text cites no PMID, DOI, NCT number or PMC id, so there is nothing to check; "
         "write them as e.g. PMID 35657320, doi:10.1056/NEJMoa2200075 or NCT03057951."),
        ({"text": "Apixaban lowers stroke (NCT0123456)."}, 400, "malformed_identifier",
         "Not well-formed identifier: NCT0123456. A PMID is digits without a leading zero (e.g. PMID 35657320), "
         "an NCT number is NCT and 8 digits (e.g. NCT03057951), a DOI looks like 10.1056/NEJMoa2200075."),
        ({"text": "Apixaban (PMID 22663011). " * 800}, 413, "text_too_long",
         "The text is 20,800 characters long; check at most 20,000 characters at a time."),
        ({"text": "a" * 1_000_000}, 413, "text_too_long",
         "The text is 1,000,000 characters long; check at most 20,000 characters at a time."),
        ({}, 400, "invalid", "text: This field is required."),
        ({"text": ["PMID 22663011"]}, 400, "invalid", "text: Not a valid string."),
        ({"text": "PMID 22663011"}, 400, "no_sentences",
         "The text has identifiers but no sentence to check against them; paste the sentences that cite them."),
    ],
)
def test_bad_input_is_a_4xx_json_error(api: APIClient, body: dict, status: int, code: str, message: str) -> None:
    response = api.post(URL, body, format="json")
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"] == message


def test_a_body_that_is_not_json_is_a_400(api: APIClient) -> None:
    response = api.post(URL, data=b'{"text": "PMID 1', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_a_body_over_the_upload_limit_is_a_json_400(api: APIClient, settings) -> None:
    body = json.dumps({"text": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)})
    response = api.post(URL, data=body, content_type="application/json")
    assert (response.status_code, response.json()["error"]["code"]) == (400, "request_too_large")


def test_the_endpoint_is_in_the_openapi_schema(api: APIClient) -> None:
    schema = api.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/claims/check"]["post"]
    assert operation["summary"] == "Check the citations of any text"
    request = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert schema["components"]["schemas"][request]["required"] == ["text"]
    response = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert set(schema["components"]["schemas"][response]["properties"]) == {"sentences", "counts"}
