"""Conversation services: the question is stored first, an answer (or a clear failure) always follows."""

import logging

import pytest
from django.core.exceptions import ValidationError

from chat.models import Conversation, Message, MessageRole
from chat.pipeline import DeltaEvent
from chat.selectors import conversation_history
from chat.services import conversations as conversation_services
from chat.services.conversations import (
    UNEXPECTED_FAILURE,
    AnswerSaved,
    QuestionSaved,
    check_question,
    conversation_create,
    conversation_reply,
    conversation_reply_events,
)
from tests.chat.factories import ConversationFactory, MessageFactory
from tests.chat.fakes import HttpError

pytestmark = pytest.mark.django_db
QUESTION = "Does empagliflozin reduce heart failure hospitalisation in HFpEF?"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Type a question first: the question is empty."),
        ("   \n ", "Type a question first: the question is empty."),
        ("\u200b\ufeff ", "Type a question first: the question is empty."),  # only characters that show as nothing
        (None, "The question must be text."),
        (
            "x" * 4001,
            "The question is 4001 characters long; the limit is 4000. Shorten it to the clinical question itself.",
        ),
    ],
)
def test_bad_questions_are_refused_with_a_precise_message(text, message):
    with pytest.raises(ValidationError) as raised:
        check_question(text)
    assert raised.value.messages == [message]


def test_invalid_question_stores_nothing(user):
    conversation = conversation_create(user=user)
    with pytest.raises(ValidationError):
        conversation_reply(conversation=conversation, text="  ")
    assert Message.objects.count() == 0


def test_reply_stores_question_then_verified_answer(user, library):
    conversation = conversation_create(user=user)
    answer = conversation_reply(conversation=conversation, text=f"  {QUESTION} ")
    question, stored = conversation.messages.order_by("id")
    assert (question.role, question.content) == (MessageRole.USER, QUESTION)
    assert stored == answer and stored.role == MessageRole.ASSISTANT
    assert stored.extras["confidence"] == "GREEN"
    assert stored.extras["references"][0]["pmid"] == "34449189"
    assert stored.extras["trace"][0]["step"] == "understand"
    assert stored.settings_hash == stored.extras["settings_hash"] and len(stored.settings_hash) == 12
    assert stored.context["intent"] == "hfpef_ckd"
    conversation.refresh_from_db()
    assert conversation.title == QUESTION


def test_events_announce_the_stored_question_before_any_answer_text(user, library):
    conversation = conversation_create(user=user)
    stream = list(conversation_reply_events(conversation=conversation, text=QUESTION))
    assert isinstance(stream[0], QuestionSaved)
    assert isinstance(stream[-1], AnswerSaved)
    assert any(isinstance(event, DeltaEvent) for event in stream)


def test_unexpected_failure_keeps_the_question_and_stores_a_clear_message(user, library, monkeypatch, caplog):
    caplog.set_level(logging.INFO)

    def explode(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(conversation_services, "answer_events", explode)
    conversation = conversation_create(user=user)
    answer = conversation_reply(conversation=conversation, text=QUESTION)
    assert answer.content == UNEXPECTED_FAILURE
    assert answer.extras["error"]["code"] == "internal_error"
    assert list(conversation.messages.values_list("role", "content")) == [
        (MessageRole.USER, QUESTION),
        (MessageRole.ASSISTANT, UNEXPECTED_FAILURE),
    ]
    assert any(record.msg.get("event") == "answer_failed" for record in caplog.records if isinstance(record.msg, dict))


def test_provider_failure_is_stored_as_a_clear_message_in_the_conversation(user, library, fake_anthropic, llm_settings):
    fake_anthropic.script(HttpError(529, "overloaded_error", "Overloaded"))
    conversation = conversation_create(user=user)
    answer = conversation_reply(
        conversation=conversation, text=QUESTION, settings=llm_settings(fallback_to_extractive=False)
    )
    assert answer.content.startswith("The language model could not answer (Anthropic is overloaded (HTTP 529)")
    assert answer.extras["error"]["code"] == "llm_overloaded"
    assert conversation.messages.filter(role=MessageRole.USER, content=QUESTION).exists()


def test_a_listener_that_leaves_early_still_gets_the_answer_stored(user, library):
    conversation = conversation_create(user=user)
    stream = conversation_reply_events(conversation=conversation, text=QUESTION)
    assert isinstance(next(stream), QuestionSaved)
    stream.close()  # the browser tab was closed
    assert list(conversation.messages.values_list("role", flat=True)) == [MessageRole.USER, MessageRole.ASSISTANT]
    assert conversation.messages.last().extras["references"][0]["pmid"] == "34449189"


def test_history_alternates_and_strips_citation_markers():
    conversation = ConversationFactory()
    MessageFactory(conversation=conversation, role=MessageRole.USER, content="First question?")
    MessageFactory(
        conversation=conversation, role=MessageRole.ASSISTANT, content="Answer one [1][2].\n\n**Sources**\n- [1] X"
    )
    MessageFactory(conversation=conversation, role=MessageRole.USER, content="Unanswered question?")
    current = MessageFactory(conversation=conversation, role=MessageRole.USER, content="Now?")
    assert conversation_history(conversation=conversation, before=current, turns=6) == [
        {"role": "user", "content": "First question?"},
        {"role": "assistant", "content": "Answer one."},
    ]
    assert conversation_history(conversation=conversation, before=current, turns=0) == []


def test_conversation_create_validates_app_and_title(user):
    with pytest.raises(ValidationError, match="Unknown app 'mail'"):
        conversation_create(user=user, app="mail")
    assert Conversation.objects.count() == 0
    assert conversation_create(user=user, title=" AF ", app="trialscout").title == "AF"
