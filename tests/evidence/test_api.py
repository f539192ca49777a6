"""`/api/v1/studies/`: anonymous reads with filters, curator-only writes, JSON errors."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from evidence.models import Study
from tests.evidence.factories import StudyFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/studies/"
NEW_STUDY = {
    "study_name": "EMPEROR-Preserved",
    "pmid": "34449189",
    "doi": "10.1056/NEJMoa2107038",
    "nct_number": "NCT03057951",
    "title": "Empagliflozin in Heart Failure with a Preserved Ejection Fraction",
    "key_finding": "Empagliflozin lowered the composite of CV death or HF hospitalisation.",
    "disease_tags": ["heart_failure", "hfpef"],
    "evidence_strength": "high",
    "kind": "trial",
}


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def curator_api(api):
    user = UserFactory(username="curator", groups=["curator"])
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api


def test_anonymous_list_is_paginated_and_ordered_by_strength(api, django_assert_num_queries):
    from evidence.models import Finding

    StudyFactory(study_name="low", evidence_strength=1)
    high = StudyFactory(study_name="high", evidence_strength=3, pmid="35657320", doi="10.1056/NEJMoa2200075")
    Finding.objects.create(
        study=high, statement="Chemotherapy use fell (15% vs 28%).", recommendation_class="", evidence_level="",
        source_url="https://pubmed.ncbi.nlm.nih.gov/35657320/", locator="Abstract, Results",
    )
    with django_assert_num_queries(3):  # count + page + the page's findings, no N+1
        response = api.get(URL)
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [row["study_name"] for row in body["results"]] == ["high", "low"]
    assert body["results"][0]["evidence_strength"] == "high"
    assert body["results"][0]["links"] == {
        "pubmed": "https://pubmed.ncbi.nlm.nih.gov/35657320/",
        "doi": "https://doi.org/10.1056/NEJMoa2200075",
    }
    finding = body["results"][0]["findings"][0]
    assert (finding["shown"], finding["locator"], finding["review_status"], finding["reviewed_by"]) == (
        "Chemotherapy use fell (15% vs 28%).", "Abstract, Results", "awaiting_review", None
    )
    assert body["results"][1]["findings"] == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tag=ckd", ["af-ckd"]),
        ("strength=high", ["af-ckd"]),
        ("strength=moderate", ["colon-negative"]),
        ("context=negative", ["af-ckd", "colon-negative"]),  # "both" always matches
        ("kind=guideline", ["af-ckd"]),
        ("year=2019", ["colon-negative"]),
        ("q=Apixaban", ["af-ckd"]),
    ],
)
def test_list_filters(api, query, expected):
    StudyFactory(
        study_name="af-ckd",
        disease_tags=["af", "ckd"],
        evidence_strength=3,
        kind="guideline",
        publication_year=2024,
        title="Apixaban dosing in kidney disease",
    )
    StudyFactory(
        study_name="colon-negative",
        disease_tags=["colon"],
        result_context="negative",
        evidence_strength=2,
        publication_year=2019,
    )
    response = api.get(f"{URL}?{query}")
    assert response.status_code == 200
    assert [row["study_name"] for row in response.json()["results"]] == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("strength=strong", "strength: Unknown strength 'strong'; use one of low, moderate, high."),
        ("context=maybe", "context: Unknown context 'maybe'; use one of positive, negative, both, monitoring."),
        ("year=20x4", "year: year must be a four-digit year between 1900 and 2100 in digits 0-9, got '20x4'."),
        # Found by the fuzz test: thousands of words made a full-text query PostgreSQL would not plan (500).
        ("q=" + "a+" * 2000, "q: q is limited to 300 characters; got 4,000."),
    ],
)
def test_bad_filters_are_400_with_the_error_envelope(api, query, message):
    response = api.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert response.json()["error"]["message"] == message


def test_detail_and_unknown_id(api):
    study = StudyFactory()
    assert api.get(f"{URL}{study.pk}/").json()["study_name"] == study.study_name
    response = api.get(f"{URL}999999/")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "No Study matches the given query."}}


def test_anonymous_and_non_curator_writes_are_refused(api):
    response = api.post(URL, NEW_STUDY, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    user = UserFactory(username="clinician")
    api.force_authenticate(user)
    response = api.post(URL, NEW_STUDY, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["message"] == "Only curators may change the evidence library."
    assert not Study.objects.exists()


def test_curator_creates_updates_and_deletes_with_token_auth(curator_api):
    created = curator_api.post(URL, NEW_STUDY, format="json")
    assert created.status_code == 201, created.json()
    study_id = created.json()["id"]
    assert created.json()["links"]["clinicaltrials"] == "https://clinicaltrials.gov/study/NCT03057951"
    patched = curator_api.patch(f"{URL}{study_id}/", {"evidence_strength": "moderate"}, format="json")
    assert patched.status_code == 200
    assert Study.objects.get().evidence_strength == 2
    assert curator_api.delete(f"{URL}{study_id}/").status_code == 204
    assert not Study.objects.exists()
    assert Study.history.filter(id=study_id).count() == 3  # created, changed, deleted


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pmid": "PMID-1"}, "pmid: 'PMID-1' is not a PMID"),
        ({"pmid": "", "doi": "", "nct_number": ""}, "A study needs at least one identifier"),
        ({"evidence_strength": "extreme"}, 'evidence_strength: "extreme" is not a valid choice.'),
        # Arabic-Indic and full-width digits, which int() reads as 123 and 12345678.
        ({"publication_year": "\u0661\u0662\u0663"},
         "publication_year: Enter a whole number in the digits 0-9, e.g. 2019; got '\u0661\u0662\u0663'."),
        ({"sample_size": "\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18"},
         "sample_size: Enter a whole number in the digits 0-9, e.g. 2019; got "
         "'\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18'."),
        ({"sample_size": "1_000"}, "sample_size: Enter a whole number in the digits 0-9, e.g. 2019; got '1_000'."),
    ],
)
def test_invalid_writes_are_400_and_store_nothing(curator_api, change, message):
    response = curator_api.post(URL, {**NEW_STUDY, **change}, format="json")
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]
    assert not Study.objects.exists()


def test_numbers_in_ascii_digits_are_read_as_text_or_json_numbers(curator_api):
    response = curator_api.post(URL, {**NEW_STUDY, "publication_year": " 2019 ", "sample_size": 1234}, format="json")
    assert response.status_code == 201, response.json()
    assert Study.objects.values_list("publication_year", "sample_size").get() == (2019, 1234)


def test_duplicate_identifier_is_400_and_keeps_the_original(curator_api):
    StudyFactory(study_name="ORIGINAL", pmid="34449189")
    response = curator_api.post(URL, NEW_STUDY, format="json")
    assert response.status_code == 400
    assert "Another study already has this PMID." in response.json()["error"]["message"]
    assert list(Study.objects.values_list("study_name", flat=True)) == ["ORIGINAL"]


def test_openapi_schema_and_docs_are_served(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert "/api/v1/studies/" in schema.json()["paths"]
    assert api.get("/api/docs/").status_code == 200
