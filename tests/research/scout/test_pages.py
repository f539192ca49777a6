"""The Evidence Scout pages: the form (fields, JSON or an earlier profile), the lists, a run's progress and summary."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from django.test import Client

from pubmed.models import SearchQuery
from research.models import ScoutRun, ScoutRunStatus
from research.scout import pipeline
from research.scout.pipeline import scout_run_execute
from research.scout.runs import scout_run_create
from tests.conftest import free_port
from tests.factories import UserFactory
from tests.pubmed.corpus import CorpusEutils
from tests.research.scout.conftest import DISEASE, DRUG, PROFILE

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher(client: Client) -> object:
    user = UserFactory(username="researcher")
    client.force_login(user)
    return user


def test_the_page_needs_a_login_and_is_in_the_navigation(client: Client) -> None:
    response = client.get("/scout/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(UserFactory())
    page = client.get("/chat/").content.decode()
    assert re.search(r'<a href="/scout/" *>Evidence Scout</a>', page)
    current = client.get("/scout/").content.decode()
    assert re.search(r'<a href="/scout/" aria-current="page">Evidence Scout</a>', current)


def test_the_form_starts_a_run_with_the_profile_fields_and_lists_runs_and_pairs(
    client: Client, researcher: object, django_assert_max_num_queries: object
) -> None:
    SearchQuery.objects.create(drug="gefitinib", disease="non-small cell lung cancer",
                               pubmed_query="q1\nq2", pmids=["1", "2", "3"])
    response = client.post("/scout/", {
        "drug": "Gefitinib", "disease": "NSCLC", "synonyms": "Iressa\nZD1839", "targets": "EGFR; ERBB2",
        "mechanisms": "", "atc_codes": "L01EB01", "atc_descriptions": "", "drug_type": "small molecule",
        "max_pmids": "50",
    })
    run = ScoutRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/scout/{run.pk}/"
    assert (run.drug, run.disease, run.max_pmids, run.user) == ("Gefitinib", "NSCLC", 50, researcher)
    assert run.profile == {"synonyms": ["Iressa", "ZD1839"], "targets": ["EGFR", "ERBB2"], "mechanisms": [],
                           "atc_codes": ["L01EB01"], "atc_descriptions": [], "drug_type": "small molecule"}
    progress = client.get(response["Location"]).content.decode()
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in progress
    assert f'data-poll="/api/v1/scout/{run.pk}/"' in progress and "js/scout.js" in progress
    assert progress.count('data-status="pending"') == 6
    with django_assert_max_num_queries(8):  # type: ignore[operator]
        page = client.get("/scout/").content.decode()
    assert f'href="/scout/{run.pk}/">Gefitinib</a>' in page
    assert re.search(r"<td>gefitinib</td><td>non-small cell lung cancer</td>\s*<td><details><summary>2 queries", page)
    assert "Gefitinib: {&quot;atc_codes&quot;" in page  # offered as an earlier profile


def test_an_earlier_profile_can_be_reused_and_bad_json_is_explained(client: Client, researcher: object) -> None:
    scout_run_create(user=researcher, drug="insulin", disease="diabetes", profile=PROFILE, max_pmids=10,
                     enqueue=False)
    response = client.post("/scout/", {"drug": "insulin", "disease": "type 1 diabetes", "profile_json": "{oops"})
    assert response.status_code == 400
    assert "The drug profile is not valid JSON (Expecting property name enclosed in double quotes" in (
        response.content.decode())
    deep = client.post("/scout/", {"drug": "insulin", "disease": "type 1 diabetes", "profile_json": "[" * 100_000})
    assert deep.status_code == 400  # not the parser's RecursionError
    assert "The drug profile is not valid JSON (arrays and objects nested deeper than 64 levels" in (
        deep.content.decode())
    response = client.post("/scout/", {"drug": "insulin", "disease": "type 1 diabetes", "previous_profile": "0"})
    assert response.status_code == 302
    assert ScoutRun.objects.get(disease="type 1 diabetes").profile == PROFILE


def test_a_finished_run_shows_findings_that_link_to_the_five_cited_abstracts(
    client: Client, researcher: object, corpus_eutils: CorpusEutils
) -> None:
    run = scout_run_create(user=researcher, drug=DRUG, disease=DISEASE, profile=PROFILE, max_pmids=100,
                           enqueue=False)
    run = scout_run_execute(run_id=str(run.pk))
    assert run.status == ScoutRunStatus.SUCCEEDED
    page = client.get(f"/scout/{run.pk}/").content.decode()
    assert "http-equiv=\"refresh\"" not in page and "data-poll" not in page and "js/scout.js" not in page
    cited = re.findall(r'<li id="pmid-(\d+)"><a href="https://pubmed.ncbi.nlm.nih.gov/\1/"', page)
    assert cited == [item["pmid"] for item in run.result["top5"]]
    links = re.findall(r'href="#pmid-(\d+)" class="citation"', page)
    assert links and set(links) <= set(cited)
    assert page.count('data-status="done"') == 6
    assert f"{run.result['strength']} evidence" in page
    assert other_users_cannot_see(client, run)


def other_users_cannot_see(client: Client, run: ScoutRun) -> bool:
    client.force_login(UserFactory())
    return client.get(f"/scout/{run.pk}/").status_code == 404


def test_operators_see_runs_read_only_in_the_admin(client: Client) -> None:
    run = scout_run_create(user=None, drug="gefitinib", disease="nsclc", profile={}, max_pmids=10, enqueue=False)
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    listing = client.get("/admin/research/scoutrun/").content.decode()
    assert f"/admin/research/scoutrun/{run.pk}/change/" in listing
    assert client.get("/admin/research/scoutrun/add/").status_code == 403
    assert client.get(f"/admin/research/scoutrun/{run.pk}/change/").status_code == 200


def test_a_failed_run_offers_resume_which_queues_it_again(client: Client, researcher: object) -> None:
    from research.scout.runs import scout_run_fail

    run = scout_run_create(user=researcher, drug="gefitinib", disease="nsclc", profile={}, max_pmids=10,
                           enqueue=False)
    scout_run_fail(run_id=str(run.pk), message="NCBI E-utilities could not be reached: HTTP 503")
    page = client.get(f"/scout/{run.pk}/").content.decode()
    assert f'action="/scout/{run.pk}/resume/"' in page
    assert "NCBI E-utilities could not be reached: HTTP 503" in page
    response = client.post(f"/scout/{run.pk}/resume/")
    assert response.status_code == 302 and response["Location"] == f"/scout/{run.pk}/"
    run.refresh_from_db()
    assert (run.status, run.error) == (ScoutRunStatus.PENDING, "")
    assert f'action="/scout/{run.pk}/resume/"' not in client.get(f"/scout/{run.pk}/").content.decode()


def test_offline_the_run_page_says_once_in_plain_words_which_step_stopped(
    client: Client, researcher: object, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.NCBI_EUTILS_BASE_URL = f"http://127.0.0.1:{free_port()}/entrez/eutils/"  # nothing listens
    settings.NCBI_API_KEY = f"fake-test-key-{uuid.uuid4().hex}"
    settings.NCBI_MAX_RETRIES = 4  # five attempts per request, as in production
    settings.NCBI_BACKOFF_INITIAL_SECONDS = settings.NCBI_BACKOFF_MAX_SECONDS = 0.01
    settings.REDIS_URL = settings.CELERY_BROKER_URL = ""  # no worker: the run fails for good at once
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/scout/", {"drug": "apixaban", "disease": "heart failure"})
    run = ScoutRun.objects.get()
    assert run.status == ScoutRunStatus.FAILED
    message = (
        "PubMed could not be reached, so this search stopped at step 1, “Normalise and verify the disease name”. "
        "Nothing is lost: the finished steps are kept and the search continues from this step once PubMed "
        "answers again."
    )
    assert run.error == message
    assert [(step["key"], step["status"], step["detail"]) for step in run.steps] == [
        ("normalise", "failed", "PubMed could not be reached."),
        *[(key, "pending", "") for key, _ in pipeline.STAGES[1:]],
    ]
    page = client.get(response["Location"]).content.decode()
    assert page.count('role="alert"') == 1 and page.count("PubMed could not be reached") == 2
    assert message in page
    for raw in ("E-utilities", "esearch.fcgi", "attempts", "ConnectError", "Errno", "connection failed"):
        assert raw not in page
