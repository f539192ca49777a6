"""`/api/v1/conversations/`: conversations and cited answers as JSON (`?stream=1` streams SSE)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat import selectors
from chat.models import Conversation, ConversationApp, Message, MessageRole
from chat.pipeline import MAX_QUESTION_CHARS, answer_document
from chat.services.conversations import (
    AnswerSaved,
    QuestionSaved,
    check_question,
    conversation_create,
    conversation_reply_events,
)
from chat.streaming import event_stream_response, reply_stream, wants_stream
from config.api import StandardPagination
from evidence.export import citations_export
from evidence.export_http import (
    EXPORT_RESPONSES,
    FORMAT_PARAMETER,
    CitationFormatNegotiation,
    citation_file_response,
    export_format_from,
)


class EventStreamRenderer(BaseRenderer):
    """Lets clients send `Accept: text/event-stream` (the stream itself bypasses rendering)."""

    media_type = "text/event-stream"
    format = "sse"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return JSONRenderer().render(data)


class ConversationInput(serializers.Serializer):
    title = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    app = serializers.ChoiceField(choices=ConversationApp.choices, required=False, default=ConversationApp.CHAT)


class QuestionInput(serializers.Serializer):
    question = serializers.CharField(max_length=MAX_QUESTION_CHARS, trim_whitespace=True)


class ConversationOutput(serializers.ModelSerializer):
    class Meta:
        model = Conversation
        fields = ["id", "title", "app", "created_at", "updated_at"]


class MessageOutput(serializers.ModelSerializer):
    answer = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "role", "content", "created_at", "settings_hash", "answer"]

    def get_answer(self, message: Message) -> dict[str, Any] | None:
        if message.role != MessageRole.ASSISTANT:
            return None
        return ask_document(message)


class ConversationDetailOutput(ConversationOutput):
    messages = MessageOutput(many=True, read_only=True)

    class Meta(ConversationOutput.Meta):
        fields = [*ConversationOutput.Meta.fields, "messages"]


def ask_document(message: Message) -> dict[str, Any]:
    """Return the `ask` JSON of a stored assistant message (DESIGN.md section 6)."""
    return answer_document(answer=message.content, extras=message.extras, settings_hash=message.settings_hash)


class ConversationListCreateApi(APIView):
    """List your conversations, or start one."""

    @extend_schema(responses=ConversationOutput(many=True))
    def get(self, request: Request) -> Response:
        paginator = StandardPagination()
        page = paginator.paginate_queryset(selectors.conversation_list(user=request.user), request, view=self)
        return paginator.get_paginated_response(ConversationOutput(page, many=True).data)

    @extend_schema(request=ConversationInput, responses={201: ConversationDetailOutput})
    def post(self, request: Request) -> Response:
        data = ConversationInput(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = conversation_create(user=request.user, **data.validated_data)
        return Response(ConversationDetailOutput(conversation).data, status=status.HTTP_201_CREATED)


class ConversationDetailApi(APIView):
    """One of your conversations with all its messages (another user's id is a 404)."""

    @extend_schema(responses=ConversationDetailOutput)
    def get(self, request: Request, pk: int) -> Response:
        conversation = selectors.conversation_get(user=request.user, conversation_id=pk)
        conversation = Conversation.objects.prefetch_related("messages").get(pk=conversation.pk)
        return Response(ConversationDetailOutput(conversation).data)


class ConversationMessagesApi(APIView):
    """Ask a question in a conversation; the answer comes back as the `ask` JSON (or as SSE)."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @extend_schema(
        request=QuestionInput,
        parameters=[
            OpenApiParameter("stream", OpenApiTypes.INT, description="1: stream server-sent events instead of JSON.")
        ],
        responses={201: OpenApiResponse(description="The `ask` JSON plus message ids.")},
    )
    def post(self, request: Request, pk: int) -> Response | HttpResponseBase:
        conversation = selectors.conversation_get(user=request.user, conversation_id=pk)
        data = QuestionInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            question = check_question(data.validated_data["question"])
        except DjangoValidationError as exc:
            raise exceptions.ValidationError({"question": exc.messages}) from exc
        events = conversation_reply_events(conversation=conversation, text=question)
        if wants_stream(request):

            def meta(event: QuestionSaved) -> dict[str, Any]:
                return {"conversation_id": conversation.pk, "question_message_id": event.message.pk}

            def done(event: AnswerSaved) -> dict[str, Any]:
                return {
                    "conversation_id": conversation.pk,
                    "message_id": event.message.pk,
                    **ask_document(event.message),
                }

            return event_stream_response(request._request, reply_stream(events, meta=meta, done=done))
        question_id = answer = None
        for event in events:
            if isinstance(event, QuestionSaved):
                question_id = event.message.pk
            elif isinstance(event, AnswerSaved):
                answer = event.message
        assert answer is not None
        return Response(
            {
                "conversation_id": conversation.pk,
                "question_message_id": question_id,
                "message_id": answer.pk,
                **ask_document(answer),
            },
            status=status.HTTP_201_CREATED,
        )


class AnswerExportApi(APIView):
    """Download one answer's references as RIS, BibTeX, MEDLINE (.nbib) or CSL-JSON."""

    content_negotiation_class = CitationFormatNegotiation

    @extend_schema(parameters=[FORMAT_PARAMETER], responses=EXPORT_RESPONSES, operation_id="answer_references_export")
    def get(self, request: Request, pk: int, message_id: int) -> HttpResponseBase:
        fmt = export_format_from(request)
        message = selectors.answer_get(user=request.user, conversation_id=pk, message_id=message_id)
        records = selectors.answer_citation_records(message=message)
        return citation_file_response(
            citations_export(records=records, fmt=fmt, name=f"medcite-answer-{message.pk}-references")
        )
