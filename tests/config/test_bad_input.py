"""Inputs that once gave a 500 (NUL bytes, Unicode digits, oversized bodies): each is a precise 4xx now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from chat.models import Conversation, Message
from pubmed.models import Abstract
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

NUL_IN_Q = "q: q contains a NUL character (\\x00), which MedCite cannot store or search; remove it."
NUL_IN_TAG = "tag: tag contains a NUL character (\\x00), which MedCite cannot store or search; remove it."
BAD_YEAR = "year: year must be a four-digit year between 1900 and 2100 in digits 0-9, got '²²²²'."
NUL_IN_QUESTION = "The question contains a NUL character (\\x00), which MedCite cannot store or search; remove it."


@pytest.fixture
def signed_in(client: Client) -> Client:
    client.force_login(UserFactory(username="dr-ada"))
    return client


@pytest.mark.parametrize(
    ("params", "message"),
    [({"q": "\x00"}, NUL_IN_Q), ({"tag": "\x00"}, NUL_IN_TAG), ({"year": "²²²²"}, BAD_YEAR)],
)
def test_study_filters_with_nul_or_unicode_digits_are_400_with_the_field_named(client: Client, params, message) -> None:
    response = client.get("/api/v1/studies/", params)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert response.json()["error"]["message"] == message

    page = client.get("/library/", params)
    assert page.status_code == 400
    assert message.split(": ", 1)[1].replace("'", "&#x27;") in page.content.decode()


def test_tablizer_compare_ids_in_unicode_digits_are_400(signed_in: Client) -> None:
    response = signed_in.get("/tablizer/", {"compare_a": "²", "compare_b": "1"})
    assert response.status_code == 400
    assert "compare_a must be the number of one of your snapshots (digits 0-9), got &#x27;²&#x27;." in (
        response.content.decode()
    )


def test_a_question_with_a_nul_byte_is_refused_and_leaves_no_empty_conversation(signed_in: Client) -> None:
    page = signed_in.post("/chat/new/", {"question": "a\x00b"})
    assert page.status_code == 400
    assert NUL_IN_QUESTION in page.content.decode()
    streamed = signed_in.post("/chat/new/", {"question": "a\x00b"}, HTTP_ACCEPT="text/event-stream")
    assert streamed.status_code == 400
    assert streamed.json()["error"]["message"] == NUL_IN_QUESTION
    assert (Conversation.objects.count(), Message.objects.count()) == (0, 0)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"question": "a\x00b"}, NUL_IN_QUESTION),
        (
            {"question": "Which of these are trials?", "conversation": "²"},
            "conversation must be the number of one of your conversations, got '²'.",
        ),
    ],
)
def test_the_research_tray_refuses_bad_questions_and_conversation_ids_before_writing(
    signed_in: Client, data: dict[str, str], message: str
) -> None:
    as_json = signed_in.post("/chat/research/tablizer/ask/", data, HTTP_ACCEPT="application/json")
    assert as_json.status_code == 400
    assert as_json.json()["error"]["message"] == message
    as_form = signed_in.post("/chat/research/tablizer/ask/", data, follow=True)
    assert message.replace("'", "&#x27;") in as_form.content.decode()
    assert (Conversation.objects.count(), Message.objects.count()) == (0, 0)


def test_an_api_body_over_the_upload_limit_is_a_json_400(signed_in: Client, settings) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = json.dumps({"title": "x" * 20_000})
    response = signed_in.post("/api/v1/conversations/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "code": "request_too_large",
            "message": "The request body is larger than the 10,000-byte limit (DATA_UPLOAD_MAX_MEMORY_SIZE); "
            "send less data per request.",
        }
    }
    assert Conversation.objects.count() == 0


def test_load_abstracts_names_the_record_with_a_nul_and_keeps_the_ones_before(tmp_path: Path) -> None:
    good = {"pmid": "35657320", "title": "Circulating tumour DNA", "abstract": "RESULTS: fewer got chemotherapy."}
    bad = {**good, "pmid": "35657321", "title": "Broken\x00title"}
    path = tmp_path / "abstracts.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(CommandError) as raised:
        call_command("load_abstracts", str(path), "--no-embed")
    assert str(raised.value) == (
        f"{path.resolve()}: record 2 (line 2): 'title' contains a NUL character (\\u0000), which cannot be stored; "
        "remove it. The 1 record(s) before it in this file are stored. Fix the file or download it again, then run "
        "the command again: stored records are not embedded again."
    )
    raw = tmp_path / "raw.jsonl"
    raw.write_bytes(json.dumps({**good, "pmid": "35657322"}).encode() + b"\n\x00\n")
    nul_byte = r"raw\.jsonl: line 2 contains a NUL byte, which cannot be stored; remove it\. The 1 record\(s\) "
    with pytest.raises(CommandError, match=nul_byte):
        call_command("load_abstracts", str(raw), "--no-embed")
    assert sorted(Abstract.objects.values_list("pmid", "title")) == [
        ("35657320", "Circulating tumour DNA"), ("35657322", "Circulating tumour DNA")
    ]
