"""Follow-up turns on the chat page and with the OpenAI-compatible fake: topic carried, then a new topic."""

from __future__ import annotations

import re

import lxml.html
import pytest

from chat.models import Conversation
from chat.services.conversations import conversation_create, conversation_reply
from tests.chat.fakes import Reply, Text

pytestmark = pytest.mark.django_db

HFPEF = "Does empagliflozin reduce heart failure hospitalisation in HFpEF?"
AF_CKD = "Should a patient with atrial fibrillation and stage 4 CKD receive oral anticoagulation?"


def test_the_chat_page_answers_a_follow_up_and_shows_what_was_carried(library, client, user) -> None:
    client.force_login(user)
    response = client.post("/chat/new/", {"question": HFPEF})
    conversation = Conversation.objects.get(user=user)
    assert response.status_code == 302
    response = client.post(f"/chat/{conversation.pk}/messages/", {"question": "what about dapagliflozin?"})
    answer_id = int(re.search(r"#message-(\d+)$", response["Location"]).group(1))
    html = lxml.html.fromstring(client.get(f"/chat/{conversation.pk}/").content.decode())
    questions = [node.text_content() for node in html.cssselect(".chat-turn.user .chat-question")]
    assert questions == [HFPEF, "what about dapagliflozin?"]
    trace = html.cssselect(f"#message-{answer_id} .chat-trace li")[0].text_content()
    carried = re.search(r"follow-up of the previous question, carried over: ([^(]+?)\s*\(\d+ ms\)", trace)
    assert carried is not None, trace
    assert "heart failure with preserved ejection fraction" in carried.group(1)
    # The follow-up names its own drug: empagliflozin is replaced, not carried.
    assert "empagliflozin" not in carried.group(1)


def test_the_openai_compatible_model_gets_the_completed_follow_up_then_a_new_topic_alone(
    library, user, fake_openai, llm_settings
) -> None:
    fake_openai.script(
        Reply([Text("KDIGO covers anticoagulation in CKD [citation:pmid:29522134:key_finding].")]),
        Reply([Text("KDIGO also covers dialysis [citation:pmid:29522134:key_finding].")]),
        Reply([Text("EMPEROR-Preserved reported fewer hospitalisations [citation:pmid:34449189:key_finding].")]),
    )
    settings = llm_settings("openai")
    conversation = conversation_create(user=user)
    conversation_reply(conversation=conversation, text=AF_CKD, settings=settings)
    follow_up = conversation_reply(conversation=conversation, text="and in dialysis?", settings=settings)
    asked = fake_openai.requests[1]["messages"][-1]["content"]
    assert "and in dialysis (" in asked and "atrial fibrillation" in asked
    assert follow_up.extras["trace"][0]["data"]["follow_up"]["asked"] == "and in dialysis?"

    conversation_reply(conversation=conversation, text=HFPEF, settings=settings)
    new_topic = fake_openai.requests[2]["messages"][-1]["content"]
    assert HFPEF in new_topic
    assert "atrial fibrillation" not in new_topic.split(HFPEF, 1)[1]
