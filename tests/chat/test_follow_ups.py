"""Follow-up questions in one conversation: read with the question before them, never a new topic's baggage."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.answer_settings import answer_settings
from chat.pipeline.state import AnswerRun
from chat.pipeline.understand import understand
from chat.services.conversations import conversation_create, conversation_reply
from tests.chat.fakes import Reply, Text

pytestmark = pytest.mark.django_db

AF_CKD = "Should a patient with atrial fibrillation and stage 4 CKD receive oral anticoagulation?"
HFPEF = "Does empagliflozin reduce heart failure hospitalisation in HFpEF?"
AF_PMIDS = {"38033089", "39210723", "29522134", "38490803"}


def reading(question, *earlier):
    history = [
        turn for text in earlier for turn in ({"role": "user", "content": text}, {"role": "assistant", "content": "…"})
    ]
    run = AnswerRun(question=question, settings=answer_settings(), history=history)
    understand(run)
    return run


@pytest.mark.parametrize(
    ("earlier", "question", "carried", "dropped"),
    [
        ([AF_CKD], "and in dialysis?", {"atrial fibrillation", "anticoagulation"}, set()),
        ([AF_CKD, "and in dialysis?"], "what dose?", {"atrial fibrillation", "anticoagulation"}, set()),
        ([HFPEF], "what about dapagliflozin?", {"heart failure with preserved ejection fraction"}, {"empagliflozin"}),
        (["Statins for primary prevention over age 75?"], "what about children?", {"statins"}, {"older adults"}),
        ([AF_CKD], "apixaban or rivaroxaban?", {"atrial fibrillation"}, {"anticoagulation"}),
        ([AF_CKD], "Is it safe in pregnancy?", {"atrial fibrillation"}, set()),
        # A short turn with no topic of its own, and a longer one naming only a treatment, continue the topic.
        (["Can adjuvant chemotherapy be withheld in stage II colon cancer when ctDNA is negative?"],
         "still holds at 5 yrs?", {"colon cancer"}, set()),
        ([AF_CKD], "which of the DOACs would you pick for her then?", {"atrial fibrillation"}, set()),
        # A turn adding to the same patient continues the case, however much it names; the drug it names in
        # shorthand ("ASA") replaces the case's decisions, as "aspirin" would.
        (["AF on apixaban, admitted with a GI bleed from a duodenal ulcer, clipped - when to restart?"],
         "he's also on ASA 81 for a stent from 2015 - keep that going?",
         {"atrial fibrillation", "gastrointestinal bleeding"}, {"anticoagulation", "restarting treatment"}),
    ],
)
def test_a_follow_up_carries_the_previous_topic_and_replaces_what_it_names(
    library, earlier, question, carried, dropped
):
    run = reading(question, *earlier)
    assert run.follow_up.is_follow_up and run.follow_up.asked == question
    assert carried <= set(run.follow_up.carried)
    assert not dropped & set(run.follow_up.carried)
    # The pipeline understands the completed question: the carried topic is in it.
    assert all(label in run.question for label in carried)


@pytest.mark.parametrize(
    "question",
    [
        HFPEF,
        "Can adjuvant chemotherapy be withheld in stage II colon cancer when ctDNA is negative?",
        "Which empirical antibiotics are recommended for community-acquired pneumonia with sepsis?",
        # Shorthand with topics of its own (no vocabulary tag, no condition-shaped word) is a new question.
        "Does hyperbaric O2 help nec fasc?",
        "Best tx for plantar warts in kids?",
    ],
)
def test_a_self_contained_question_inherits_nothing(library, question):
    run = reading(question, AF_CKD)
    assert not run.follow_up.is_follow_up
    assert run.question == question


def test_a_conversation_answers_the_follow_up_on_the_previous_topic_then_starts_a_new_one(library, user):
    conversation = conversation_create(user=user)
    conversation_reply(conversation=conversation, text=AF_CKD)
    follow_up = conversation_reply(conversation=conversation, text="and in dialysis?")
    understand_step = follow_up.extras["trace"][0]
    assert understand_step["step"] == "understand"
    assert "follow-up of the previous question, carried over: " in understand_step["detail"]
    assert "atrial fibrillation" in understand_step["data"]["follow_up"]["carried"]
    # Answered on AF and kidney disease, not abstained for want of a topic.
    assert not follow_up.extras["abstained"]
    assert {reference["pmid"] for reference in follow_up.extras["references"]} & AF_PMIDS
    # The stored question is what the user typed.
    assert conversation.messages.order_by("id")[2].content == "and in dialysis?"

    new_topic = conversation_reply(conversation=conversation, text=HFPEF)
    assert new_topic.extras["trace"][0]["data"]["follow_up"] is None
    assert not {reference["pmid"] for reference in new_topic.extras["references"]} & AF_PMIDS


def test_the_api_reads_follow_ups_in_the_same_conversation(library, user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    conversation = client.post("/api/v1/conversations/", {"title": "AF"}, format="json").json()
    url = f"/api/v1/conversations/{conversation['id']}/messages/"
    assert client.post(url, {"question": AF_CKD}, format="json").status_code == 201
    body = client.post(url, {"question": "what dose?"}, format="json").json()
    assert body["trace"][0]["data"]["follow_up"]["asked"] == "what dose?"
    assert {reference["pmid"] for reference in body["references"]} & AF_PMIDS


def test_the_model_is_asked_the_completed_question_with_the_conversation(library, user, fake_anthropic, llm_settings):
    fake_anthropic.script(
        Reply([Text("The US guideline revises advice on oral anticoagulation [citation:pmid:38033089:key_finding].")]),
        Reply([Text("KDIGO reviewed stroke prevention on dialysis [citation:pmid:29522134:key_finding].")]),
    )
    conversation = conversation_create(user=user)
    settings = llm_settings()
    conversation_reply(conversation=conversation, text=AF_CKD, settings=settings)
    conversation_reply(conversation=conversation, text="and in dialysis?", settings=settings)
    second = fake_anthropic.requests[-1]
    asked = second["messages"][-1]["content"]
    assert asked.startswith("Clinical question: and in dialysis (") and "atrial fibrillation" in asked
    assert second["messages"][0] == {"role": "user", "content": AF_CKD}


def test_a_follow_up_naming_a_time_point_leads_with_the_result_at_that_time(library, user):
    # The 2-year trial report ranks first for the topic, but the turn asks whether the finding held at 5 years:
    # the 5-year report's finding leads (it came second before).
    conversation = conversation_create(user=user)
    first_turn = "ctDNA-neg stage II colon ca after resection - can I skip adjuvant chemo?"
    conversation_reply(conversation=conversation, text=first_turn)
    reply = conversation_reply(conversation=conversation, text="still holds at 5 yrs?")
    first = reply.content.split("\n")[0]
    assert "5-year recurrence-free survival" in first and "DYNAMIC 5-year outcomes" in first
