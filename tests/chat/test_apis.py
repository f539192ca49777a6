"""`/api/v1/conversations/`: the declared resource suite, the `ask` JSON and its SSE form."""

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.models import Conversation, MessageRole
from tests.chat.factories import ConversationFactory, MessageFactory
from tests.chat.test_views import parse_sse

pytestmark = pytest.mark.django_db
QUESTION = "Does dapagliflozin benefit patients with heart failure and mildly reduced or preserved ejection fraction?"
ASK_KEYS = {"answer", "citations", "references", "confidence", "abstained", "trace"}


@pytest.fixture
def api(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


# Declared suite: every endpoint, its anonymous status, and the other-user status.
ENDPOINTS = [
    ("get", "/api/v1/conversations/", None),
    ("post", "/api/v1/conversations/", {"title": "AF"}),
    ("get", "/api/v1/conversations/{theirs}/", None),
    ("post", "/api/v1/conversations/{theirs}/messages/", {"question": QUESTION}),
]


@pytest.mark.parametrize(("method", "url", "body"), ENDPOINTS)
def test_anonymous_requests_are_refused_with_the_error_envelope(method, url, body, other_user):
    theirs = ConversationFactory(user=other_user)
    response = getattr(APIClient(), method)(url.format(theirs=theirs.pk), body, format="json")
    assert response.status_code == 401
    assert response.json() == {
        "error": {"code": "not_authenticated", "message": "Authentication credentials were not provided."}
    }


@pytest.mark.parametrize(("method", "url", "body"), [endpoint for endpoint in ENDPOINTS if "{theirs}" in endpoint[1]])
def test_another_users_conversation_is_a_404(api, other_user, method, url, body):
    theirs = ConversationFactory(user=other_user)
    response = getattr(api, method)(url.format(theirs=theirs.pk), body, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not theirs.messages.exists()


def test_create_conversation(api, user):
    response = api.post("/api/v1/conversations/", {"title": "AF and CKD"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert (body["title"], body["app"], body["messages"]) == ("AF and CKD", "chat", [])
    assert Conversation.objects.get(pk=body["id"]).user == user


def test_create_conversation_rejects_unknown_app(api):
    response = api.post("/api/v1/conversations/", {"app": "mail"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid",
        "message": 'app: "mail" is not a valid choice.',
        "fields": {"app": ['"mail" is not a valid choice.']},
    }
    assert Conversation.objects.count() == 0


def test_list_is_paginated_and_query_count_is_flat(api, user, other_user, django_assert_max_num_queries):
    ConversationFactory.create_batch(4, user=user)
    ConversationFactory(user=other_user)
    with django_assert_max_num_queries(4):
        response = api.get("/api/v1/conversations/?page_size=3")
    body = response.json()
    assert (body["count"], len(body["results"])) == (4, 3)


def test_ask_returns_the_ask_json(api, user, library):
    conversation = ConversationFactory(user=user)
    response = api.post(f"/api/v1/conversations/{conversation.pk}/messages/", {"question": QUESTION}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) >= ASK_KEYS
    assert body["references"][0] == {
        "pmid": "36027570",
        "doi": "10.1056/NEJMoa2206286",
        "nct": "NCT03619213",
        "url": "https://pubmed.ncbi.nlm.nih.gov/36027570/",
        "title": body["references"][0]["title"],
        "authors": "Solomon SD et al.",
        "journal": "N Engl J Med",
        "year": 2022,
        "study_name": "DELIVER",
        "badges": ["Curated library", "Landmark Trial"],  # beside the level of evidence ("RCT"): three in all
        "source_badge": "PubMed",
        "quality_badges": ["Gold Standard", "Landmark Trial"],
        "evidence_level": "rct",
        "evidence_level_label": "Randomised controlled trial",
        "evidence_level_inferred": False,
        "level_badge": "RCT",
        "retracted": False,
        "n": 1,
        "doc_id": "pmid:36027570",
    }
    assert body["confidence"] == "GREEN" and body["abstained"] is False
    assert body["message_id"] == conversation.messages.get(role=MessageRole.ASSISTANT).pk
    detail = api.get(f"/api/v1/conversations/{conversation.pk}/").json()
    assert [message["role"] for message in detail["messages"]] == ["user", "assistant"]
    assert detail["messages"][0]["answer"] is None
    assert detail["messages"][1]["answer"]["references"] == body["references"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, "question: This field is required."),
        ({"question": "   "}, "question: This field may not be blank."),
        ({"question": "x" * 4001}, "question: Ensure this field has no more than 4000 characters."),
    ],
)
def test_bad_question_is_a_400_and_stores_nothing(api, user, body, message):
    conversation = ConversationFactory(user=user)
    response = api.post(f"/api/v1/conversations/{conversation.pk}/messages/", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message
    assert not conversation.messages.exists()


def test_stream_returns_server_sent_events_ending_with_the_ask_json(api, user, library):
    conversation = ConversationFactory(user=user)
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/messages/?stream=1",
        {"question": QUESTION},
        format="json",
        HTTP_ACCEPT="text/event-stream",
    )
    assert (response.status_code, response["Content-Type"]) == (200, "text/event-stream")
    events = parse_sse(b"".join(response.streaming_content).decode())
    assert events[0][0] == "meta" and events[-1][0] == "done"
    done = events[-1][1]
    assert set(done) >= ASK_KEYS
    assert done["conversation_id"] == conversation.pk
    assert json.dumps(done)  # plain JSON all the way down


def test_conversation_detail_queries_do_not_grow_with_messages(api, user, django_assert_max_num_queries):
    conversation = ConversationFactory(user=user)
    MessageFactory.create_batch(6, conversation=conversation)
    with django_assert_max_num_queries(4):
        response = api.get(f"/api/v1/conversations/{conversation.pk}/")
    assert len(response.json()["messages"]) == 6
