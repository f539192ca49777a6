"""`/api/v1/scout/`: a job on a real Celery worker, live progress, the EvidenceSummary, errors, resume after a kill."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from research.models import ScoutRun, ScoutRunStatus
from research.scout import pipeline
from research.scout.pipeline import STAGES, scout_run_execute
from research.scout.runs import scout_run_create
from research.tasks import scout_run_task
from tests.factories import UserFactory
from tests.pubmed.conftest import FakeEutils
from tests.pubmed.corpus import Corpus, CorpusEutils
from tests.research.scout.conftest import DISEASE, DRUG, PROFILE


@pytest.fixture
def api() -> APIClient:
    return APIClient()


def wait_for(run_id: str, seconds: float = 60) -> ScoutRun:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run = ScoutRun.objects.get(pk=run_id)
        if run.finished:
            return run
        time.sleep(0.2)
    raise AssertionError(f"scout run {run_id} did not finish within {seconds} s")


def test_a_posted_run_is_done_by_the_worker_and_read_back_with_its_summary(
    api: APIClient, corpus_eutils: CorpusEutils, celery_worker: object, transactional_db: None
) -> None:
    user = UserFactory(username="researcher")
    api.force_authenticate(user)
    response = api.post("/api/v1/scout/", {"drug": DRUG, "disease": DISEASE, "profile": PROFILE, "max_pmids": 100},
                        format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert response["Location"] == body["url"] == f"http://testserver/api/v1/scout/{body['id']}/"
    assert [step["key"] for step in body["steps"]] == [key for key, _ in STAGES]
    run = wait_for(body["id"])
    assert run.status == ScoutRunStatus.SUCCEEDED, run.error
    assert run.task_id
    detail = api.get(body["url"]).json()
    assert (detail["status"], detail["progress"], detail["stage"]) == ("succeeded", 1.0, "")
    assert all(step["status"] == "done" and step["seconds"] is not None for step in detail["steps"])
    counts = {step["key"]: step["count"] for step in detail["steps"]}
    result = detail["result"]
    assert counts["fetch"] == result["pmid_count"] and counts["rerank"] == 5
    assert counts["expand"] == len(result["queries"])
    top5 = {item["pmid"] for item in result["top5"]}
    assert result["key_findings"] and all(set(f["pmids"]) <= top5 for f in result["key_findings"])
    assert set(result["supporting_pmids"]) <= top5
    listed = api.get("/api/v1/scout/").json()
    assert [item["id"] for item in listed] == [body["id"]]


@pytest.mark.django_db
def test_without_a_broker_ncbi_being_down_fails_the_run_and_resuming_it_continues_where_it_stopped(
    api: APIClient, fake_eutils: FakeEutils, corpus: Corpus, django_capture_on_commit_callbacks: Any
) -> None:
    fake_eutils.respond("/esearch.fcgi", "unavailable", status=503, content_type="text/plain")
    api.force_authenticate(UserFactory())
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/scout/", {"drug": "gefitinib", "disease": "NSCLC"}, format="json")
    assert response.status_code == 202
    run = ScoutRun.objects.get()
    assert run.status == ScoutRunStatus.FAILED
    assert run.error == pipeline.pubmed_unreachable_message("normalise")
    steps = {step["key"]: step["status"] for step in run.steps}
    assert (steps["normalise"], steps["expand"], steps["fetch"], steps["search"]) == ("failed", "pending",
                                                                                      "pending", "pending")
    assert run.state == {}  # nothing verified, nothing kept
    detail = api.get(f"/api/v1/scout/{run.pk}/").json()
    assert (detail["status"], detail["progress"], detail["result"]) == ("failed", 1.0, None)

    fake_eutils.server.clear()  # NCBI is back
    back = CorpusEutils(corpus=corpus).serve(fake_eutils.server)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/v1/scout/{run.pk}/resume/")
    assert response.status_code == 202 and response.json()["status"] == "pending"
    run.refresh_from_db()
    assert (run.status, run.attempts, run.error) == (ScoutRunStatus.SUCCEEDED, 2, "")
    # The disease was verified (one count) and the fetch stage sent its 5 queries.
    assert len(back.requests("esearch.fcgi")) == 1 + len(run.state["expand"]["queries"]) == 6
    assert run.state["normalise"]["count"] is not None
    again = api.post(f"/api/v1/scout/{run.pk}/resume/")
    assert again.status_code == 409
    assert again.json()["error"] == {
        "code": "conflict", "message": f"Scout run {run.pk} is succeeded; only a failed run can be resumed."}


@pytest.mark.django_db
def test_posting_the_same_input_while_it_runs_returns_the_same_run(api: APIClient) -> None:
    api.force_authenticate(UserFactory())
    first = api.post("/api/v1/scout/", {"drug": "gefitinib", "disease": "NSCLC"}, format="json").json()
    second = api.post("/api/v1/scout/", {"drug": "Gefitinib", "disease": "nsclc"}, format="json").json()
    assert first["id"] == second["id"]
    assert (first["status"], first["max_pmids"], first["progress"]) == ("pending", 500, 0.0)
    assert ScoutRun.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"disease": "NSCLC"}, "drug: Give the drug name, e.g. gefitinib."),
        ({"drug": "gefitinib", "disease": ""}, "disease: Give the disease name, e.g. non-small cell lung cancer."),
        ({"drug": "gefitinib", "disease": "NSCLC", "max_pmids": 0},
         "max_pmids: max_pmids must be a whole number from 1 to 500; got 0."),
        ({"drug": "gefitinib", "disease": "NSCLC", "profile": {"dose": "1"}},
         "profile: Unknown drug profile key(s): dose; use synonyms, targets, mechanisms, atc_codes, "
         "atc_descriptions, drug_type."),
        ({"drug": "gefitinib", "disease": "NSCLC", "profile": {"targets": [7]}}, "profile: targets must be a list of "
                                                                                 "strings."),
    ],
)
def test_bad_input_is_a_400_saying_what_to_change(api: APIClient, payload: dict[str, Any], message: str) -> None:
    api.force_authenticate(UserFactory())
    response = api.post("/api/v1/scout/", payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert response.json()["error"]["message"] == message
    assert not ScoutRun.objects.exists()


@pytest.mark.django_db
def test_runs_are_private_and_need_authentication(api: APIClient) -> None:
    owner, other = UserFactory(), UserFactory()
    run = scout_run_create(user=owner, drug="gefitinib", disease="nsclc", profile={}, max_pmids=10, enqueue=False)
    response = api.post("/api/v1/scout/", {"drug": "x", "disease": "y"}, format="json")
    assert response.status_code in {401, 403} and response.json()["error"]["code"] == "not_authenticated"
    api.force_authenticate(other)
    response = api.get(f"/api/v1/scout/{run.pk}/")
    assert response.status_code == 404
    assert response.json()["error"] == {"code": "not_found", "message": f"No scout run {run.pk} visible to you."}
    api.force_authenticate(owner)
    assert api.get(f"/api/v1/scout/{run.pk}/").json()["drug"] == "gefitinib"


@pytest.mark.django_db
def test_view_only_staff_read_another_users_run_but_cannot_resume_it(api: APIClient, client: Any) -> None:
    owner = UserFactory(username="researcher")
    staff = UserFactory(username="auditor", is_staff=True)  # view-only staff: no curator group, no superuser
    run = scout_run_create(user=owner, drug="gefitinib", disease="nsclc", profile={}, max_pmids=10, enqueue=False)
    ScoutRun.objects.filter(pk=run.pk).update(status=ScoutRunStatus.FAILED, error="NCBI was down.")
    api.force_authenticate(staff)
    assert api.get(f"/api/v1/scout/{run.pk}/").json()["status"] == "failed"  # staff may still read
    response = api.post(f"/api/v1/scout/{run.pk}/resume/")
    assert response.status_code == 404
    assert response.json()["error"] == {
        "code": "not_found",
        "message": f"No scout run {run.pk} of yours; only the user who started a run may resume it.",
    }
    client.force_login(staff)
    page = client.get(f"/scout/{run.pk}/").content.decode()
    assert "NCBI was down." in page and "/resume/" not in page  # no Resume button on someone else's run
    assert client.post(f"/scout/{run.pk}/resume/").status_code == 404
    run.refresh_from_db()
    assert (run.status, run.attempts) == (ScoutRunStatus.FAILED, 0)  # not queued again


@pytest.mark.django_db
def test_the_openapi_schema_documents_the_scout_endpoints(api: APIClient) -> None:
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert {"/api/v1/scout/", "/api/v1/scout/{run_id}/"} <= set(schema["paths"])
    assert set(schema["paths"]["/api/v1/scout/"]) >= {"get", "post"}
    result = schema["components"]["schemas"]["ScoutResult"]["properties"]
    assert {"summary", "study_count", "study_types", "strength", "key_findings", "supporting_pmids"} <= set(result)


def test_a_run_killed_mid_stage_resumes_on_the_worker_without_repeating_finished_stages(
    corpus_eutils: CorpusEutils, celery_worker: object, transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = scout_run_create(user=None, drug=DRUG, disease=DISEASE, profile=PROFILE, max_pmids=100, enqueue=False)

    def killed(ctx: pipeline.StageContext) -> Any:
        raise SystemExit("worker killed")  # what a worker stopped mid-stage leaves behind

    monkeypatch.setitem(pipeline.STAGE_FUNCTIONS, "rerank", killed)
    with pytest.raises(SystemExit):
        scout_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert (run.status, run.stage, run.attempts) == (ScoutRunStatus.RUNNING, "rerank", 1)
    assert set(run.state) == {"normalise", "expand", "fetch", "search"}
    assert [step["status"] for step in run.steps] == ["done"] * 4 + ["running", "pending"]
    first_hits = run.state["search"]["hits"]
    requests_before = len(corpus_eutils.seen)
    monkeypatch.undo()

    scout_run_task.delay(str(run.pk))  # the broker redelivers the unacknowledged task
    run = wait_for(str(run.pk))
    assert (run.status, run.attempts, run.error) == (ScoutRunStatus.SUCCEEDED, 2, "")
    assert len(corpus_eutils.seen) == requests_before  # no esearch or efetch was repeated
    assert run.state["search"]["hits"] == first_hits
    assert [step["status"] for step in run.steps] == ["done"] * 6
    assert run.result["top5"] and {i["pmid"] for i in run.result["top5"]} <= {h["pmid"] for h in first_hits}
