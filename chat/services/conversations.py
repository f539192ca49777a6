"""Conversations: create them, and reply to a question with a stored, verified answer.

`reply_lifecycle` is the one lifecycle of a reply, for the chat page and the research trays: the
user's message is committed before any retrieval or model call, so a failure later on can never
lose it; whatever happens afterwards, an assistant message is stored - the answer, or a clear
message saying what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import structlog
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from chat.answer_settings import AnswerSettings, answer_settings
from chat.models import Conversation, ConversationApp, Message, MessageRole
from chat.pipeline import MAX_QUESTION_CHARS, AnswerResult, DoneEvent, PipelineEvent, answer_events
from chat.selectors import conversation_history
from config.inputs import check_no_nul
from evidence.characters import strip_invisible

logger = structlog.get_logger(__name__)

TITLE_CHARS = 80
UNEXPECTED_FAILURE = (
    "Something went wrong while answering, and no answer was produced. Your question is saved; "
    "please try again. If it keeps happening, tell the MedCite operators (request id in the logs)."
)


@dataclass(frozen=True)
class QuestionSaved:
    """The user's question is stored (first event of a reply)."""

    message: Message


@dataclass(frozen=True)
class AnswerSaved:
    """The assistant's reply is stored (last event of a reply)."""

    message: Message
    result: AnswerResult | None


ReplyEvent = PipelineEvent | QuestionSaved | AnswerSaved


def check_question(text: Any) -> str:
    """Return the question stripped (of characters that show as nothing too), or raise ValidationError saying what
    is wrong with it."""
    if not isinstance(text, str):
        raise ValidationError("The question must be text.", code="invalid")
    question = check_no_nul(strip_invisible(text).strip(), field="The question")
    if not question:
        raise ValidationError("Type a question first: the question is empty.", code="blank")
    if len(question) > MAX_QUESTION_CHARS:
        raise ValidationError(
            f"The question is {len(question)} characters long; the limit is {MAX_QUESTION_CHARS}. "
            "Shorten it to the clinical question itself.",
            code="max_length",
        )
    return question


def check_app(app: Any) -> str:
    if app not in ConversationApp.values:
        raise ValidationError(f"Unknown app {app!r}; use one of {', '.join(ConversationApp.values)}.", code="invalid")
    return str(app)


@transaction.atomic
def conversation_create(*, user: Any, title: str = "", app: str = ConversationApp.CHAT) -> Conversation:
    """Create an empty conversation for `user`."""
    title = (title or "").strip()
    if len(title) > 200:
        raise ValidationError("The title is longer than 200 characters.", code="max_length")
    return Conversation.objects.create(user=user, title=title, app=check_app(app))


@transaction.atomic
def message_create(
    *,
    conversation: Conversation,
    role: str,
    content: str,
    context: dict[str, Any] | None = None,
    extras: dict[str, Any] | None = None,
    settings_hash: str = "",
) -> Message:
    """Store one message and mark the conversation as active."""
    message = Message.objects.create(
        conversation=conversation,
        role=role,
        content=content,
        context=context or {},
        extras=extras or {},
        settings_hash=settings_hash,
    )
    updates: dict[str, Any] = {"updated_at": timezone.now()}
    if not conversation.title and role == MessageRole.USER:
        updates["title"] = (
            content if len(content) <= TITLE_CHARS else content[: TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
        )
    Conversation.objects.filter(pk=conversation.pk).update(**updates)
    for field, value in updates.items():
        setattr(conversation, field, value)
    return message


@dataclass(frozen=True)
class Reply:
    """An assistant reply ready to store: what the page shows, and the answer it came from if any."""

    content: str
    context: dict[str, Any]
    extras: dict[str, Any]
    result: AnswerResult | None = None


ReplyProducer = Callable[[Message], Iterator[PipelineEvent | Reply]]


def reply_lifecycle(
    *,
    conversation: Conversation,
    question: str,
    produce: ReplyProducer,
    failure: Reply,
    settings_hash: str,
    question_context: dict[str, Any] | None = None,
) -> Iterator[ReplyEvent]:
    """Store the question, stream what `produce(question message)` yields, and always store one reply.

    The `Reply` that `produce` yields is stored; if producing raises, `failure` is stored instead.
    A consumer that stops listening (a closed tab) does not lose the reply: it is finished and stored.
    """
    question_message = message_create(
        conversation=conversation, role=MessageRole.USER, content=question, context=question_context
    )

    def store(reply: Reply) -> Message:
        return message_create(
            conversation=conversation,
            role=MessageRole.ASSISTANT,
            content=reply.content,
            context=reply.context,
            extras=reply.extras,
            settings_hash=settings_hash,
        )

    stored: Message | None = None
    events = produce(question_message)
    try:
        yield QuestionSaved(question_message)
        for event in events:
            if isinstance(event, Reply):
                stored = store(event)
                yield AnswerSaved(stored, event.result)
            else:
                yield event
    except GeneratorExit:
        if stored is None:
            _finish_unheard(conversation, events, store, failure)
        raise
    except Exception:
        logger.exception("answer_failed", conversation_id=conversation.pk, message_id=question_message.pk)
        if stored is None:
            stored = store(failure)
            yield AnswerSaved(stored, None)


def _finish_unheard(
    conversation: Conversation,
    events: Iterator[PipelineEvent | Reply],
    store: Callable[[Reply], Message],
    failure: Reply,
) -> None:
    try:
        for event in events:
            if isinstance(event, Reply):
                store(event)
                return
    except Exception:
        logger.exception("answer_failed", conversation_id=conversation.pk, detached=True)
        store(failure)


def conversation_reply_events(
    *, conversation: Conversation, text: Any, settings: AnswerSettings | None = None
) -> Iterator[ReplyEvent]:
    """Store the question, answer it, store the answer; yield progress and both stored messages.

    Raises ValidationError (before storing anything) for an empty or oversized question.
    """
    question = check_question(text)
    settings = settings or answer_settings()

    def produce(question_message: Message) -> Iterator[PipelineEvent | Reply]:
        history = conversation_history(conversation=conversation, before=question_message, turns=settings.history_turns)
        for event in answer_events(question=question, history=history, settings=settings):
            if isinstance(event, DoneEvent):
                result = event.result
                context = {"question": result.question, **result.context}
                yield Reply(content=result.answer, context=context, extras=result.extras(), result=result)
            else:
                yield event

    return reply_lifecycle(
        conversation=conversation,
        question=question,
        produce=produce,
        failure=Reply(
            content=UNEXPECTED_FAILURE,
            context={"question": question},
            extras={
                "confidence": "RED",
                "abstained": True,
                "citations": [],
                "references": [],
                "trace": [],
                "error": {"code": "internal_error", "message": UNEXPECTED_FAILURE, "notice": UNEXPECTED_FAILURE},
                "settings_hash": settings.short_hash(),
            },
        ),
        settings_hash=settings.short_hash(),
    )


def conversation_reply(*, conversation: Conversation, text: Any, settings: AnswerSettings | None = None) -> Message:
    """Store the question and its verified answer; return the stored assistant message."""
    for event in conversation_reply_events(conversation=conversation, text=text, settings=settings):
        if isinstance(event, AnswerSaved):
            return event.message
    raise RuntimeError("The reply ended without storing an answer.")
