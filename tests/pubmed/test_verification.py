"""Verify-identifiers against a fake E-utilities server replaying real esummary JSON."""

import json
import time

import pytest
from django.urls import reverse

from evidence.models import IdentifierCheck, Study
from pubmed.services.verification import study_identifiers_verify, title_similarity
from pubmed.tasks import verify_study_identifiers
from tests.evidence.factories import StudyFactory
from tests.factories import UserFactory


@pytest.fixture
def eutils(httpserver, settings, shared_data):
    settings.NCBI_EUTILS_BASE_URL = httpserver.url_for("/entrez/eutils/")
    settings.NCBI_MAX_RETRIES = 2
    settings.NCBI_BACKOFF_INITIAL_SECONDS = 0.01
    settings.NCBI_BACKOFF_MAX_SECONDS = 0.02
    settings.NCBI_RETRY_AFTER_MAX_SECONDS = 0.05
    recording = shared_data / "eutils/yeliztli/esummary_pubmed_json_34313350_27078154.json"
    httpserver.expect_request("/entrez/eutils/esummary.fcgi").respond_with_data(
        recording.read_bytes(), content_type="application/json"
    )
    return httpserver


@pytest.fixture
def library_under_check(db, shared_data):
    body = json.loads((shared_data / "eutils/yeliztli/esummary_pubmed_json_34313350_27078154.json").read_text())
    real_title = body["result"]["34313350"]["title"]
    return {
        "match": StudyFactory(study_name="match", pmid="34313350", title=real_title),
        "mismatch": StudyFactory(study_name="mismatch", pmid="27078154", title="A completely different paper on ctDNA"),
        "missing": StudyFactory(study_name="missing", pmid="12345678"),
        "no_pmid": StudyFactory(study_name="no-pmid", pmid="", doi="10.1056/NEJMoa2200075"),
    }


def _statuses(studies):
    return {name: study.identifier_checks.get().status for name, study in studies.items()}


def test_verification_records_existence_and_title_similarity(eutils, library_under_check):
    checks = study_identifiers_verify(study_ids=[s.pk for s in library_under_check.values()])
    assert len(checks) == 4
    assert _statuses(library_under_check) == {
        "match": "match",
        "mismatch": "mismatch",
        "missing": "not_found",
        "no_pmid": "no_pmid",
    }
    match = library_under_check["match"].identifier_checks.get()
    assert match.pmid_exists is True and match.title_similarity == 1.0
    mismatch = library_under_check["mismatch"].identifier_checks.get()
    assert mismatch.pmid_exists is True and mismatch.title_similarity < 0.5
    assert mismatch.pubmed_title.startswith("Development of a Melting Curve-Based Allele-Specific PCR")
    missing = library_under_check["missing"].identifier_checks.get()
    assert missing.pmid_exists is False and missing.detail == "PubMed has no record for PMID 12345678."
    request, _ = eutils.log[0]
    assert sorted(request.values["id"].split(",")) == ["12345678", "27078154", "34313350"]
    assert request.values["db"] == "pubmed"
    assert request.values["tool"] == "medcite"


def test_rate_limited_pubmed_is_recorded_as_an_error_for_each_study(httpserver, settings, shared_data, db):
    settings.NCBI_EUTILS_BASE_URL = httpserver.url_for("/entrez/eutils/")
    settings.NCBI_MAX_RETRIES = 2
    settings.NCBI_BACKOFF_INITIAL_SECONDS = 0.01
    settings.NCBI_BACKOFF_MAX_SECONDS = 0.02
    settings.NCBI_RETRY_AFTER_MAX_SECONDS = 0.05
    body = (shared_data / "eutils/biomcp/esummary_error_429_rate_limit_exceeded.json").read_bytes()
    httpserver.expect_request("/entrez/eutils/esummary.fcgi").respond_with_data(
        body, status=429, content_type="application/json"
    )
    study = StudyFactory(pmid="34313350")
    [check] = study_identifiers_verify(study_ids=[study.pk])
    assert check.status == IdentifierCheck.Status.ERROR
    assert "rate limit" in check.detail.lower() or "429" in check.detail
    assert len(httpserver.log) >= 2  # retried before giving up
    assert Study.objects.get(pk=study.pk).pmid == "34313350"  # nothing about the study changed


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        ("Circulating Tumor DNA Analysis", "Circulating tumor DNA analysis.", 1.0),
        ("<i>KRAS</i> mutant &amp; cancer", "KRAS mutant & cancer", 1.0),
        ("", "Anything", 0.0),
    ],
)
def test_title_similarity_ignores_case_punctuation_and_markup(ours, theirs, expected):
    assert title_similarity(ours, theirs) == expected


@pytest.mark.django_db
def test_admin_action_is_curator_only_and_records_checks(
    client, eutils, library_under_check, django_capture_on_commit_callbacks
):
    curator = UserFactory(username="cura", is_staff=True, groups=["curator"])
    client.force_login(curator)
    ids = [s.pk for s in library_under_check.values()]
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:evidence_study_changelist"),
            {"action": "verify_identifiers", "_selected_action": ids},
            follow=True,
        )
    assert response.status_code == 200
    assert "Verification of 4 studies against PubMed was queued" in response.content.decode()
    assert IdentifierCheck.objects.count() == 4
    changelist = client.get(reverse("admin:evidence_study_changelist")).content.decode()
    assert "PMID exists, title matches (100% title match)" in changelist

    viewer = UserFactory(username="viewer", is_staff=True)
    client.force_login(viewer)
    page = client.get(reverse("admin:evidence_study_changelist")).content.decode()
    assert "verify_identifiers" not in page


@pytest.mark.celery
def test_verification_task_runs_on_a_real_worker_over_redis(celery_worker, eutils, library_under_check):
    verify_study_identifiers.delay(study_ids=[s.pk for s in library_under_check.values()])
    deadline = time.monotonic() + 30
    while IdentifierCheck.objects.count() < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _statuses(library_under_check) == {
        "match": "match",
        "mismatch": "mismatch",
        "missing": "not_found",
        "no_pmid": "no_pmid",
    }


def test_pubmed_app_registers_the_identifier_check_queue_on_start_up():
    from evidence.identifier_checks import identifier_checks_queue
    from pubmed.dispatch import study_identifiers_verify_enqueue

    assert identifier_checks_queue() is study_identifiers_verify_enqueue


@pytest.mark.django_db
def test_admin_hides_the_action_when_no_app_checks_identifiers(client, monkeypatch):
    from evidence import identifier_checks

    monkeypatch.setattr(identifier_checks, "_queue", None)
    client.force_login(UserFactory(username="cura", is_staff=True, groups=["curator"]))
    StudyFactory(study_name="unchecked", pmid="34313350")
    page = client.get(reverse("admin:evidence_study_changelist")).content.decode()
    assert "unchecked" in page
    assert "verify_identifiers" not in page
