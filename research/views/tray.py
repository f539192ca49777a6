"""Tray and AI-column endpoints of the research pages: form posts (redirect), htmx partials, JSON and SSE.

htmx requests (`HX-Request`) get the HTML partial the page swaps in; requests asking for JSON
(`Accept: application/json`) get JSON, with errors as `{"error": {"code", "message"}}`; plain form
posts are redirected back to the page with a message, so everything also works without JavaScript.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST

from chat.models import Message
from chat.services.conversations import AnswerSaved, QuestionSaved, check_question, conversation_create
from chat.streaming import event_stream_response, reply_stream, wants_stream
from config.inputs import parse_ascii_int
from research import selectors
from research.ai_column_runs import ai_column_run_start
from research.ai_columns import (
    ai_column_create,
    ai_column_delete,
    check_ai_column,
    run_status,
)
from research.page import run_cells
from research.registries import PAGES, Page, UnknownPage, page_get
from research.reply import tray_reply, tray_reply_events
from research.suggestions import PayloadDecisionError, page_url, payload_decide
from research.views.htmx import is_htmx

STATE_MAX_CHARS = 4000


def _page(name: str) -> Page:
    try:
        return page_get(name)
    except UnknownPage as exc:
        raise Http404(str(exc)) from exc


def _state(request: HttpRequest) -> str:
    """Return the page state posted with a form (the page's own query string), bounded in size."""
    state = request.POST.get("state", "")
    return state[:STATE_MAX_CHARS] if isinstance(state, str) else ""


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _error(request: HttpRequest, *, code: str, message: str, status: int, back: str) -> HttpResponse:
    # An htmx request must not follow a redirect to a whole page that it would swap into a card.
    if _wants_json(request) or wants_stream(request) or is_htmx(request):
        return JsonResponse({"error": {"code": code, "message": message}}, status=status)
    messages.error(request, message)
    return redirect(back)


def _validation_message(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return " ".join(" ".join(group) for group in exc.message_dict.values())
    return " ".join(exc.messages)


@login_required
@require_POST
def tray_ask(request: HttpRequest, page: str) -> HttpResponseBase:
    """Ask the tray of `page` a question about the page; streamed with `?stream=1`."""
    research_page = _page(page)
    state = _state(request)
    back = page_url(page=research_page.name, state=state, anchor="tray")
    try:
        question = check_question(request.POST.get("question", ""))
    except ValidationError as exc:
        return _error(request, code=exc.code or "invalid", message=exc.messages[0], status=400, back=back)
    conversation_field = request.POST.get("conversation", "").strip()
    conversation_id = parse_ascii_int(conversation_field)
    if conversation_field and conversation_id is None:
        return _error(
            request,
            code="invalid",
            message=f"conversation must be the number of one of your conversations, got {conversation_field!r}.",
            status=400,
            back=back,
        )
    conversation = selectors.tray_conversation(
        user=request.user, page=research_page.name, conversation_id=conversation_id
    ) or conversation_create(user=request.user, app=research_page.name)
    if wants_stream(request):
        events = tray_reply_events(
            conversation=conversation, page=research_page, state=state, text=question, user=request.user
        )

        def meta(event: QuestionSaved) -> dict[str, Any]:
            return {"conversation_id": conversation.pk, "question_message_id": event.message.pk}

        def done(event: AnswerSaved) -> dict[str, Any]:
            html = render_to_string(
                "research/_tray_message.html",
                {"message": event.message, "page_state": state, "page": research_page},
                request=request,
            )
            return {"message_id": event.message.pk, "html": html, "payloads": event.message.extras.get("payloads", [])}

        return event_stream_response(request, reply_stream(events, meta=meta, done=done, preview=True))
    answer = tray_reply(conversation=conversation, page=research_page, state=state, text=question, user=request.user)
    return redirect(page_url(page=research_page.name, state=state, anchor=f"message-{answer.pk}"))


@login_required
@require_POST
def tray_new(request: HttpRequest, page: str) -> HttpResponse:
    """Start a new, empty tray conversation on `page`."""
    research_page = _page(page)
    conversation_create(user=request.user, app=research_page.name)
    return redirect(page_url(page=research_page.name, state=_state(request), anchor="tray"))


@login_required
@require_POST
def payload_decision(request: HttpRequest, message_id: int, payload_id: str, decision: str) -> HttpResponse:
    """Accept or dismiss one suggestion of a tray reply."""
    message: Message = selectors.message_for_user(user=request.user, message_id=message_id)
    state = _state(request)
    app = message.conversation.app
    back = page_url(page=app, state=state, anchor=f"message-{message.pk}") if app in PAGES else "/"
    try:
        outcome = payload_decide(
            user=request.user, message=message, payload_id=payload_id, decision=decision, state=state
        )
    except PayloadDecisionError as exc:
        card = next((p for p in message.extras.get("payloads", []) if p.get("id") == payload_id), None)
        if is_htmx(request) and card is not None:
            context = {"message": message, "payload": card, "page_state": state, "payload_error": exc.message}
            return render(request, "research/_payload_card.html", context, status=exc.status)
        return _error(request, code=exc.code, message=exc.message, status=exc.status, back=back)
    if is_htmx(request):
        context = {
            "message": message,
            "payload": outcome.payload,
            "page_state": state,
            "announcement": "Suggestion accepted." if decision == "accept" else "Suggestion dismissed.",
        }
        response = render(request, "research/_payload_decided.html", context)
        if decision == "accept":
            # The accepted search or column shows on the page it leads to, so the browser goes there.
            response["HX-Redirect"] = outcome.redirect
        return response
    if _wants_json(request):
        body: dict[str, Any] = {"payload": outcome.payload, "redirect": outcome.redirect}
        if outcome.column is not None:
            body["column"] = {"id": outcome.column.pk, "name": outcome.column.name, "kind": outcome.column.kind}
        if outcome.run is not None:
            body["run"] = {"id": str(outcome.run.pk), "total": outcome.run.total}
        return JsonResponse(body)
    if decision == "accept" and outcome.column is not None:
        messages.success(request, f"Added the AI column {outcome.column.name!r}.")
    return redirect(outcome.redirect)


@login_required
@require_POST
def ai_column_add(request: HttpRequest, page: str) -> HttpResponse:
    """Add an AI column to `page` and queue its evaluation over the rows the page shows."""
    research_page = _page(page)
    state = _state(request)
    back = page_url(page=research_page.name, state=state, anchor="ai-columns")
    try:
        fields = check_ai_column(
            user=request.user,
            page=research_page.name,
            name=request.POST.get("name", ""),
            criteria=request.POST.get("criteria", ""),
            kind=request.POST.get("kind", ""),
        )
        column = ai_column_create(user=request.user, page=research_page.name, **fields)
    except ValidationError as exc:
        return _error(
            request,
            code=getattr(exc, "code", None) or "invalid",
            message=_validation_message(exc),
            status=400,
            back=back,
        )
    item_ids = research_page.build_context(state=state, user=request.user).item_ids
    run = ai_column_run_start(column=column, item_ids=item_ids)
    if _wants_json(request):
        return JsonResponse(
            {"column": {"id": column.pk, "name": column.name}, "run": {"id": str(run.pk)} if run else None},
            status=201,
        )
    messages.success(request, f"Added the AI column {column.name!r}.")
    return redirect(back)


@login_required
@require_POST
def ai_column_evaluate(request: HttpRequest, column_id: int) -> HttpResponse:
    """Evaluate the rows of the page that the column has no answer for yet (new rows, failed rows)."""
    column = selectors.ai_column_get(user=request.user, column_id=column_id)
    state = _state(request)
    item_ids = page_get(column.page).build_context(state=state, user=request.user).item_ids
    run = ai_column_run_start(column=column, item_ids=item_ids)
    if _wants_json(request):
        return JsonResponse({"run": {"id": str(run.pk), "total": run.total} if run else None})
    if run is None:
        messages.info(request, f"Every row already has an answer in {column.name!r}.")
    return redirect(page_url(page=column.page, state=state, anchor="ai-columns"))


@login_required
@require_POST
def ai_column_remove(request: HttpRequest, column_id: int) -> HttpResponse:
    column = selectors.ai_column_get(user=request.user, column_id=column_id)
    page, name = column.page, column.name
    ai_column_delete(column=column)
    if _wants_json(request):
        return JsonResponse({"deleted": column_id})
    messages.success(request, f"Removed the AI column {name!r}.")
    return redirect(page_url(page=page, state=_state(request), anchor="ai-columns"))


@login_required
@require_GET
def ai_column_run(request: HttpRequest, run_id: str) -> HttpResponse:
    """Return a run's progress and the answers of its rows (polled by the progress bar) as HTML or JSON."""
    run = selectors.ai_column_run_get(user=request.user, run_id=run_id)
    results = list(selectors.ai_column_run_results(run=run))
    if is_htmx(request):
        context = {"run": run, "column": run.column, "cells": run_cells(run=run, results=results)}
        return render(request, "research/_ai_run.html", context)
    return JsonResponse(run_status(run=run, results=results))
