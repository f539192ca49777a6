"""Chat pages: the conversation list, a conversation, and asking (streamed, or POST + redirect without JS)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from chat import selectors
from chat.models import Conversation
from chat.services.conversations import (
    AnswerSaved,
    QuestionSaved,
    check_question,
    conversation_create,
    conversation_reply,
    conversation_reply_events,
)
from chat.streaming import event_stream_response, reply_stream, wants_stream
from evidence.export import UnknownExportFormat, check_export_format, citations_export
from evidence.export_http import citation_file_response

SIDEBAR_SIZE = 50


def _page(
    request: HttpRequest, conversation: Conversation | None, *, question: str = "", error: str = "", status: int = 200
) -> HttpResponse:
    context: dict[str, Any] = {
        "conversations": selectors.conversation_list(user=request.user)[:SIDEBAR_SIZE],
        "conversation": conversation,
        "chat_messages": list(selectors.conversation_messages(conversation=conversation)) if conversation else [],
        "question": question,
        "error": error,
    }
    return render(request, "chat/conversation.html" if conversation else "chat/index.html", context, status=status)


def _invalid_json(exc: ValidationError) -> JsonResponse:
    return JsonResponse({"error": {"code": exc.code or "invalid", "message": exc.messages[0]}}, status=400)


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return _page(request, None)


@login_required
@require_GET
def conversation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _page(request, selectors.conversation_get(user=request.user, conversation_id=pk))


def _reply(request: HttpRequest, conversation: Conversation, question: str) -> HttpResponseBase:
    url = reverse("chat:conversation", args=[conversation.pk])
    if wants_stream(request):
        events = conversation_reply_events(conversation=conversation, text=question)

        def meta(event: QuestionSaved) -> dict[str, Any]:
            return {
                "conversation_id": conversation.pk,
                "conversation_url": url,
                "question_message_id": event.message.pk,
            }

        def done(event: AnswerSaved) -> dict[str, Any]:
            html = render_to_string("chat/_message.html", {"message": event.message}, request=request)
            return {
                "message_id": event.message.pk,
                "conversation_url": url,
                "confidence": event.message.extras.get("confidence", ""),
                "html": html,
            }

        return event_stream_response(request, reply_stream(events, meta=meta, done=done, preview=True))
    answer = conversation_reply(conversation=conversation, text=question)
    return redirect(f"{url}#message-{answer.pk}")


@login_required
@require_POST
def conversation_new(request: HttpRequest) -> HttpResponseBase:
    """Start a conversation with its first question."""
    try:
        question = check_question(request.POST.get("question", ""))
    except ValidationError as exc:
        if wants_stream(request):
            return _invalid_json(exc)
        return _page(request, None, question=request.POST.get("question", ""), error=exc.messages[0], status=400)
    conversation = conversation_create(user=request.user)
    return _reply(request, conversation, question)


@login_required
@require_POST
def message_new(request: HttpRequest, pk: int) -> HttpResponseBase:
    """Ask a follow-up question in a conversation."""
    conversation = selectors.conversation_get(user=request.user, conversation_id=pk)
    try:
        question = check_question(request.POST.get("question", ""))
    except ValidationError as exc:
        if wants_stream(request):
            return _invalid_json(exc)
        return _page(
            request, conversation, question=request.POST.get("question", ""), error=exc.messages[0], status=400
        )
    return _reply(request, conversation, question)


@login_required
@require_GET
def answer_export(request: HttpRequest, pk: int, message_id: int) -> HttpResponse:
    """Download an answer's references in the format chosen under the answer."""
    message = selectors.answer_get(user=request.user, conversation_id=pk, message_id=message_id)
    try:
        fmt = check_export_format(request.GET.get("format"))
    except UnknownExportFormat as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    records = selectors.answer_citation_records(message=message)
    return citation_file_response(
        citations_export(records=records, fmt=fmt, name=f"medcite-answer-{message.pk}-references")
    )
