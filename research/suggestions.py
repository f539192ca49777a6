"""Accepting and dismissing the suggestions (payloads) of a tray reply; the decision is kept on the message.

Accepting a search suggestion returns the page URL that fills the form and runs it; accepting an
AI-column suggestion adds the column and queues its evaluation over the rows the page shows. A
suggestion is decided once: a second decision is refused, and a refused acceptance (no language
model, a duplicate column name) records nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from chat.models import Message
from research.ai_column_runs import ai_column_run_start
from research.ai_columns import AIColumnFields, ai_column_create, check_ai_column
from research.models import AIColumn, AIColumnRun
from research.registries import UnknownPage, page_get, payload_type_get

ACCEPT, DISMISS = "accept", "dismiss"
PENDING, ACCEPTED, DISMISSED = "pending", "accepted", "dismissed"


class PayloadDecisionError(Exception):
    """The decision cannot be made; `status` is the HTTP status a view answers with."""

    def __init__(self, code: str, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True)
class PayloadDecision:
    payload: dict[str, Any]
    redirect: str
    column: AIColumn | None = None
    run: AIColumnRun | None = None


def page_url(*, page: str, state: str, anchor: str = "") -> str:
    """Return the URL of a research page showing `state` (its own query string)."""
    url = reverse(page_get(page).url_name)
    return url + (f"?{state}" if state else "") + (f"#{anchor}" if anchor else "")


def _find(message: Message, payload_id: str) -> dict[str, Any]:
    for payload in message.extras.get("payloads", []):
        if payload.get("id") == payload_id:
            return payload
    raise PayloadDecisionError("not_found", f"This reply has no suggestion {payload_id!r}.", status=404)


def check_payload_decision(*, message: Message, payload_id: str, decision: str) -> dict[str, Any]:
    """Return the payload to decide, or raise PayloadDecisionError saying why it cannot be decided."""
    if decision not in {ACCEPT, DISMISS}:
        raise PayloadDecisionError("invalid", f"Decide with {ACCEPT!r} or {DISMISS!r}, not {decision!r}.")
    payload = _find(message, payload_id)
    payload_type = payload_type_get(payload["type"])
    if not payload_type.decidable:
        raise PayloadDecisionError(
            "not_decidable", f"A {payload_type.name.replace('_', ' ')} card is information only; nothing to accept."
        )
    if payload.get("state", PENDING) != PENDING:
        raise PayloadDecisionError(
            "already_decided",
            f"This suggestion was already {payload['state']}; it cannot be decided again.",
            status=409,
        )
    return payload


def payload_decide(*, user: Any, message: Message, payload_id: str, decision: str, state: str = "") -> PayloadDecision:
    """Record the user's decision on one suggestion of `message` and carry out an acceptance.

    `state` is the query string of the page the user is on: an accepted AI column is evaluated
    over the rows it shows. Raises PayloadDecisionError; nothing is stored when it does.
    """
    try:
        page = page_get(message.conversation.app)
    except UnknownPage as exc:
        raise PayloadDecisionError("not_a_page", "Suggestions can only be decided on a research page.") from exc
    payload = check_payload_decision(message=message, payload_id=payload_id, decision=decision)
    payload_type = payload_type_get(payload["type"])
    fields: AIColumnFields | None = None
    item_ids: list[str] = []
    if decision == ACCEPT and payload_type.name == "ai_column_suggestion":
        data = payload["data"]
        try:
            fields = check_ai_column(
                user=user, page=page.name, name=data["name"], criteria=data["criteria"], kind=data["type"]
            )
        except ValidationError as exc:
            messages = exc.message_dict.values() if hasattr(exc, "error_dict") else [exc.messages]
            raise PayloadDecisionError(
                getattr(exc, "code", None) or "invalid", " ".join(" ".join(group) for group in messages)
            ) from exc
        item_ids = page.build_context(state=state, user=user).item_ids
    with transaction.atomic():
        locked = Message.objects.select_for_update().get(pk=message.pk)
        payload = check_payload_decision(message=locked, payload_id=payload_id, decision=decision)
        column = run = None
        redirect = page_url(page=page.name, state=state, anchor="tray")
        if decision == ACCEPT:
            if payload_type.accept_url:
                redirect = payload_type.url_for(payload["data"])
            elif fields is not None:
                column = ai_column_create(user=user, page=page.name, source_message=locked, **fields)
                run = ai_column_run_start(column=column, item_ids=item_ids)
                payload["column_id"] = column.pk
                redirect = page_url(page=page.name, state=state, anchor="ai-columns")
        payload["state"] = ACCEPTED if decision == ACCEPT else DISMISSED
        payload["decided_at"] = timezone.now().isoformat()
        locked.extras = {**locked.extras, "payloads": locked.extras.get("payloads", [])}
        locked.save(update_fields=["extras"])
        message.extras = locked.extras
    return PayloadDecision(payload=payload, redirect=redirect, column=column, run=run)
