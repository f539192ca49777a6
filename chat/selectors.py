"""Read-side queries of the chat app. Users only ever see their own conversations."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from chat.models import Conversation, ConversationApp, Message, MessageRole
from evidence.citations.verify import SOURCES_HEADING
from evidence.export import CitationRecord, record_from_reference
from pubmed.export import citation_record
from pubmed.models import Abstract


def conversation_list(*, user: Any, app: str = ConversationApp.CHAT) -> QuerySet[Conversation]:
    """Return the user's conversations in `app`, most recently active first."""
    return Conversation.objects.filter(user=user, app=app).order_by("-updated_at", "-id")


def conversation_get(*, user: Any, conversation_id: int) -> Conversation:
    """Return the user's conversation, or raise Http404 (also for another user's conversation)."""
    return get_object_or_404(Conversation, pk=conversation_id, user=user)


def answer_get(*, user: Any, conversation_id: int, message_id: int) -> Message:
    """Return an assistant message of the user's conversation, or raise Http404."""
    return get_object_or_404(
        Message,
        pk=message_id,
        conversation_id=conversation_id,
        conversation__user=user,
        role=MessageRole.ASSISTANT,
    )


def answer_citation_records(*, message: Message) -> list[CitationRecord]:
    """Return the answer's references as citation records, in reference order.

    A reference whose PMID is stored as an abstract gets the full author list, journal title and
    abstract from the store; the answer's own link (a curated guideline page) is kept.
    """
    references = message.references
    pmids = [str(reference["pmid"]) for reference in references if reference.get("pmid")]
    stored = Abstract.objects.in_bulk(pmids) if pmids else {}
    records = []
    for reference in references:
        record = record_from_reference(reference)
        abstract = stored.get(record.pmid)
        if abstract is not None:
            full = citation_record(abstract)
            record = replace(
                full,
                title=full.title or record.title,
                doi=full.doi or record.doi,
                pmcid=full.pmcid or record.pmcid,
                nct=record.nct,
                url=record.url,
            )
        records.append(record)
    return records


def conversation_messages(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.order_by("created_at", "id")


def conversation_history(
    *, conversation: Conversation, before: Message | None = None, turns: int = 6
) -> list[dict[str, str]]:
    """Return the last `turns` messages before `before` as alternating user/assistant turns for an LLM.

    Numbered citation markers and "Sources" lists are dropped from earlier answers: their numbers
    referred to that answer's references, not to this turn's sources.
    """
    if turns <= 0:
        return []
    messages = conversation.messages.order_by("-created_at", "-id")
    if before is not None:
        messages = messages.filter(id__lt=before.id)
    recent = list(messages[:turns])[::-1]
    history: list[dict[str, str]] = []
    for message in recent:
        if message.extras.get("error") and message.extras.get("abstained"):
            continue
        content = message.content.split(SOURCES_HEADING)[0]
        if message.role == MessageRole.ASSISTANT:
            content = re.sub(r"\s*\[\d+\]", "", content)
        content = content.strip()
        if not content:
            continue
        if history and history[-1]["role"] == message.role:
            history[-1]["content"] += "\n\n" + content
        else:
            history.append({"role": message.role, "content": content})
    while history and history[0]["role"] != MessageRole.USER:
        history.pop(0)
    if history and history[-1]["role"] == MessageRole.USER:
        history.pop()
    return history
