"""Reads for the research pages: the tray conversation, AI columns, their cached values and runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from chat.models import Conversation, Message
from research.models import AIColumn, AIColumnResult, AIColumnRun


def tray_conversation(*, user: Any, page: str, conversation_id: int | None = None) -> Conversation | None:
    """Return the user's conversation `conversation_id` on `page`, else their most recent one there."""
    if not getattr(user, "is_authenticated", False):
        return None
    conversations = Conversation.objects.filter(user=user, app=page)
    if conversation_id is not None:
        chosen = conversations.filter(pk=conversation_id).first()
        if chosen is not None:
            return chosen
    return conversations.order_by("-updated_at", "-id").first()


def tray_messages(*, conversation: Conversation | None) -> list[Message]:
    return list(conversation.messages.order_by("created_at", "id")) if conversation else []


def message_for_user(*, user: Any, message_id: int) -> Message:
    """Return the assistant message `message_id` of one of the user's conversations, or raise Http404."""
    return get_object_or_404(
        Message.objects.select_related("conversation"), pk=message_id, conversation__user=user, role="assistant"
    )


def ai_columns(*, user: Any, page: str) -> list[AIColumn]:
    """Return the user's AI columns on `page`, oldest first (the order they appear in the table)."""
    if not getattr(user, "is_authenticated", False):
        return []
    return list(AIColumn.objects.filter(user=user, page=page).order_by("created_at", "id"))


def ai_column_get(*, user: Any, column_id: int) -> AIColumn:
    return get_object_or_404(AIColumn, pk=column_id, user=user)


def ai_column_values(*, columns: Sequence[AIColumn], item_ids: Sequence[str]) -> dict[int, dict[str, AIColumnResult]]:
    """Return {column id: {item id: cached result}} for the given rows (one query)."""
    values: dict[int, dict[str, AIColumnResult]] = {column.pk: {} for column in columns}
    if not columns or not item_ids:
        return values
    results = AIColumnResult.objects.filter(column__in=list(columns), item_id__in=list(item_ids)).only(
        "column_id", "item_id", "value", "justification"
    )
    for result in results:
        values[result.column_id][result.item_id] = result
    return values


def ai_column_run_latest(*, columns: Sequence[AIColumn]) -> dict[int, AIColumnRun]:
    """Return the most recent run of each column (one query)."""
    runs = (
        AIColumnRun.objects.filter(column__in=list(columns)).order_by("column_id", "-created_at").distinct("column_id")
    )
    return {run.column_id: run for run in runs}


def ai_column_run_get(*, user: Any, run_id: Any) -> AIColumnRun:
    return get_object_or_404(AIColumnRun.objects.select_related("column"), pk=run_id, column__user=user)


def ai_column_run_results(*, run: AIColumnRun) -> QuerySet[AIColumnResult]:
    """Return the cached results of the run's rows (evaluated by this run or before it)."""
    return AIColumnResult.objects.filter(column=run.column, item_id__in=run.item_ids)
