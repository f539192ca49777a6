"""`/api/v1/research/`: the tray, suggestions, AI columns and snapshots for API consumers, user by user."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.models import Conversation, Message, MessageRole
from pubmed.models import TablizerSnapshot
from research.models import AIColumn, AIColumnRun
from tests.chat.test_views import parse_sse
from tests.factories import UserFactory
from tests.research.conftest import MELANOMA, MELANOMA_NCTS
from tests.research.fakes import record_id
from tests.research.test_tablizer import A_PMIDS, B_PMIDS, esearch_by_term  # noqa: F401

pytestmark = pytest.mark.django_db
STATE = "condition=melanoma&status=RECRUITING"
TRIAL_SEARCH = {"condition": "melanoma", "phase": ["PHASE3"], "status": ["RECRUITING"], "explanation": "Phase 3."}


def api_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


@pytest.fixture
def api(user) -> APIClient:
    return api_for(user)


@pytest.fixture
def other_api(db) -> APIClient:
    return api_for(UserFactory(username="someone-else"))


def suggestion(user, kind="trial_search_suggestion", data=None) -> Message:
    conversation = Conversation.objects.create(user=user, app="trialscout")
    return Message.objects.create(
        conversation=conversation,
        role=MessageRole.ASSISTANT,
        content="Here you are.",
        extras={"payloads": [{"id": "p1", "type": kind, "data": data or TRIAL_SEARCH, "state": "pending"}]},
    )


def test_asking_the_tray_returns_the_answer_json_and_keeps_the_conversation(api, user, melanoma_search):
    first = api.post(
        "/api/v1/research/trialscout/ask/",
        {"question": "find phase 2 melanoma trials that are recruiting", "state": STATE},
        format="json",
    )
    assert first.status_code == 201
    body = first.json()
    assert {"answer", "citations", "references", "confidence", "payloads", "conversation_id", "message_id"} <= set(body)
    assert body["payloads"][0]["type"] == "trial_search_suggestion"
    assert Conversation.objects.get(pk=body["conversation_id"]).app == "trialscout"
    again = api.post(
        "/api/v1/research/trialscout/ask/",
        {"question": "Which are recruiting?", "state": STATE, "conversation": body["conversation_id"]},
        format="json",
    )
    assert again.json()["conversation_id"] == body["conversation_id"]


def test_asking_the_tray_can_stream_server_sent_events(api, melanoma_search):
    response = api.post(
        "/api/v1/research/trialscout/ask/?stream=1",
        {"question": "find phase 2 melanoma trials that are recruiting", "state": STATE},
        format="json",
    )
    assert response["Content-Type"] == "text/event-stream"
    events = parse_sse(b"".join(response.streaming_content).decode())
    assert events[0][0] == "meta" and events[-1][0] == "done"
    assert events[-1][1]["payloads"][0]["type"] == "trial_search_suggestion"


@pytest.mark.parametrize(
    ("url", "body", "status", "code"),
    [
        ("/api/v1/research/trialscout/ask/", {"question": ""}, 400, "invalid"),
        ("/api/v1/research/trialscout/ask/", {"question": "Which?", "state": "x" * 4001}, 400, "invalid"),
        ("/api/v1/research/nowhere/ask/", {"question": "Which?"}, 404, "not_found"),
        ("/api/v1/research/trialscout/ask/", {"question": "Which?", "conversation": 999999}, 404, "not_found"),
        ("/api/v1/research/trialscout/columns/", {"name": "", "criteria": "x", "kind": "text"}, 400, "invalid"),
        ("/api/v1/research/snapshots/", {"label": "Narrow", "state": ""}, 400, "invalid"),
    ],
)
def test_bad_requests_get_the_error_envelope_and_store_nothing(api, url, body, status, code):
    before = (Message.objects.count(), AIColumn.objects.count(), TablizerSnapshot.objects.count())
    response = api.post(url, body, format="json")
    assert response.status_code == status
    assert response.json()["error"]["code"] == code and response.json()["error"]["message"]
    assert (Message.objects.count(), AIColumn.objects.count(), TablizerSnapshot.objects.count()) == before


def test_accepting_and_dismissing_suggestions(api, user):
    message = suggestion(user)
    accepted = api.post(f"/api/v1/research/messages/{message.pk}/suggestions/p1/accept/", {"state": STATE})
    assert accepted.status_code == 200
    assert accepted.json()["redirect"] == "/trialscout/?condition=melanoma&phase=PHASE3&status=RECRUITING"
    message.refresh_from_db()
    assert message.extras["payloads"][0]["state"] == "accepted"
    again = api.post(f"/api/v1/research/messages/{message.pk}/suggestions/p1/dismiss/", {"state": STATE})
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"
    other = suggestion(user)
    assert api.post(f"/api/v1/research/messages/{other.pk}/suggestions/p1/maybe/").status_code == 400
    dismissed = api.post(f"/api/v1/research/messages/{other.pk}/suggestions/p1/dismiss/")
    assert dismissed.status_code == 200 and dismissed.json()["payload"]["state"] == "dismissed"


def test_adding_an_ai_column_and_reading_its_progress_and_cells(
    api, user, research_llm, melanoma_search, study_records, django_capture_on_commit_callbacks
):
    study_records({nct_id: MELANOMA for nct_id in MELANOMA_NCTS})
    research_llm.judge = lambda prompt: {"value": "yes", "justification": f"Checked {record_id(prompt)}."}
    with django_capture_on_commit_callbacks(execute=True):
        created = api.post(
            "/api/v1/research/trialscout/columns/",
            {"name": "Over 65", "criteria": "Does it enrol adults over 65?", "kind": "boolean", "state": STATE},
            format="json",
        )
    assert created.status_code == 201
    column = AIColumn.objects.get(user=user)
    assert created.json()["column"] == {"id": column.pk, "name": "Over 65", "kind": "boolean", "page": "trialscout"}
    run_id = created.json()["run"]["id"]
    progress = api.get(f"/api/v1/research/columns/runs/{run_id}/").json()
    assert (progress["status"], progress["done"], progress["total"], progress["progress"]) == ("succeeded", 3, 3, 1.0)
    assert set(progress["results"]) == set(MELANOMA_NCTS)
    assert progress["results"][MELANOMA_NCTS[0]]["label"] == "Yes"


def test_saving_listing_and_comparing_snapshots(api, user, abstracts, esearch_by_term):  # noqa: F811
    esearch_by_term({"pten": A_PMIDS})
    saved = api.post("/api/v1/research/snapshots/", {"label": "Narrow", "state": "q=pten&n=20"}, format="json")
    assert saved.status_code == 201
    assert (saved.json()["query"], saved.json()["count"], saved.json()["pmids"]) == ("pten", 3, A_PMIDS)
    broad = TablizerSnapshot.objects.create(user=user, label="Broad", query="pten OR pi3k", count=40, pmids=B_PMIDS)
    listed = api.get("/api/v1/research/snapshots/").json()
    assert [item["label"] for item in listed] == ["Broad", "Narrow"]
    compared = api.get(f"/api/v1/research/snapshots/compare/?a={saved.json()['id']}&b={broad.pk}").json()
    assert (compared["only_a"], compared["only_b"], compared["both"]) == (
        ["35123456"],
        ["31978945", "27797938"],
        ["22663011", "28775130"],
    )
    bad = api.get("/api/v1/research/snapshots/compare/?a=%C2%B2&b=1")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"


def test_another_users_objects_are_404_and_anonymous_requests_401(api, other_api, user, client):
    message = suggestion(user)
    snapshot = TablizerSnapshot.objects.create(user=user, label="Mine", query="x", count=1, pmids=["1"])
    column = AIColumn.objects.create(user=user, page="trialscout", name="Mine", criteria="x?", kind="text")
    run = AIColumnRun.objects.create(column=column, total=0)
    assert other_api.post(f"/api/v1/research/messages/{message.pk}/suggestions/p1/accept/").status_code == 404
    assert other_api.get(f"/api/v1/research/columns/runs/{run.pk}/").status_code == 404
    assert other_api.get(f"/api/v1/research/snapshots/compare/?a={snapshot.pk}&b={snapshot.pk}").status_code == 404
    assert other_api.get("/api/v1/research/snapshots/").json() == []
    message.refresh_from_db()
    assert message.extras["payloads"][0]["state"] == "pending"
    anonymous = client.get("/api/v1/research/snapshots/")
    assert anonymous.status_code in {401, 403} and anonymous.json()["error"]["code"]


def test_the_openapi_schema_documents_the_research_endpoints(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = set(schema["paths"])
    assert {
        "/api/v1/research/{page}/ask/",
        "/api/v1/research/messages/{message_id}/suggestions/{payload_id}/{decision}/",
        "/api/v1/research/{page}/columns/",
        "/api/v1/research/columns/runs/{run_id}/",
        "/api/v1/research/snapshots/",
        "/api/v1/research/snapshots/compare/",
    } <= paths
