"""`/api/v1/research/`: what the Tablizer and TrialScout pages do, for API consumers.

A thin layer over the services the pages use: ask a page's tray about a page state (JSON or SSE),
accept or dismiss a suggestion, add an AI column and read its progress and cells, save, list and
compare Tablizer snapshots. Every object belongs to the user who made it: another user's gets 404.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat.apis import EventStreamRenderer, ask_document
from chat.pipeline import MAX_QUESTION_CHARS
from chat.services.conversations import AnswerSaved, QuestionSaved, check_question, conversation_create
from chat.streaming import event_stream_response, reply_stream, wants_stream
from pubmed.clients import EutilsError
from pubmed.models import TablizerSnapshot
from pubmed.selectors import snapshot_get, snapshots_for_user
from pubmed.services.snapshots import snapshot_save, snapshots_compare
from research import selectors
from research.ai_column_runs import ai_column_run_start
from research.ai_columns import ai_column_create, check_ai_column, run_status
from research.pages.tablizer import parse_state
from research.registries import PAGES, Page, UnknownPage, page_get
from research.reply import tray_reply_events
from research.suggestions import PayloadDecisionError, payload_decide

STATE_MAX_CHARS = 4000
STATE_HELP = "The page state: the page's own query string, e.g. q=ctDNA+colorectal&n=20 (at most 4,000 characters)."


def _page(name: str) -> Page:
    try:
        return page_get(name)
    except UnknownPage as exc:
        raise Http404(f"No research page {name!r}; pages: {', '.join(sorted(PAGES))}.") from exc


def _django_error(exc: DjangoValidationError) -> exceptions.ValidationError:
    return exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages})


class TrayQuestionInput(serializers.Serializer):
    question = serializers.CharField(max_length=MAX_QUESTION_CHARS, trim_whitespace=True)
    state = serializers.CharField(
        max_length=STATE_MAX_CHARS, required=False, allow_blank=True, default="", help_text=STATE_HELP
    )
    conversation = serializers.IntegerField(
        required=False, min_value=1, help_text="A tray conversation of yours on this page to continue."
    )


class StateInput(serializers.Serializer):
    state = serializers.CharField(
        max_length=STATE_MAX_CHARS, required=False, allow_blank=True, default="", help_text=STATE_HELP
    )


class AIColumnInput(StateInput):
    name = serializers.CharField(max_length=200)
    criteria = serializers.CharField(max_length=2000)
    kind = serializers.CharField(max_length=20, help_text="yes_no or text.")


class SnapshotInput(StateInput):
    def get_fields(self) -> dict[str, serializers.Field]:
        # "label" is also a Field attribute's name, so it cannot be declared on the class.
        return {"label": serializers.CharField(max_length=200), **super().get_fields()}


class SnapshotOutput(serializers.ModelSerializer):
    class Meta:
        model = TablizerSnapshot
        fields = ["id", "label", "query", "year_from", "year_to", "count", "pmids", "created_at"]


class TrayAskApi(APIView):
    """Ask the tray of a research page about the page's state; `?stream=1` streams server-sent events."""

    renderer_classes = [JSONRenderer, EventStreamRenderer]

    @extend_schema(
        request=TrayQuestionInput,
        parameters=[OpenApiParameter("stream", OpenApiTypes.INT, description="1: stream server-sent events.")],
        responses={201: OpenApiResponse(description="The `ask` JSON of the tray answer, its suggestions and ids.")},
    )
    def post(self, request: Request, page: str) -> Response | HttpResponseBase:
        research_page = _page(page)
        data = TrayQuestionInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            question = check_question(data.validated_data["question"])
        except DjangoValidationError as exc:
            raise exceptions.ValidationError({"question": exc.messages}) from exc
        state = data.validated_data["state"]
        wanted = data.validated_data.get("conversation")
        conversation = selectors.tray_conversation(user=request.user, page=research_page.name, conversation_id=wanted)
        if wanted is not None and (conversation is None or conversation.pk != wanted):
            raise Http404(f"You have no {research_page.name} tray conversation {wanted}.")
        conversation = conversation or conversation_create(user=request.user, app=research_page.name)
        events = tray_reply_events(
            conversation=conversation, page=research_page, state=state, text=question, user=request.user
        )

        def answer(message: Any) -> dict[str, Any]:
            return {
                "conversation_id": conversation.pk,
                "message_id": message.pk,
                **ask_document(message),
                "payloads": message.extras.get("payloads", []),
            }

        if wants_stream(request):

            def meta(event: QuestionSaved) -> dict[str, Any]:
                return {"conversation_id": conversation.pk, "question_message_id": event.message.pk}

            def done(event: AnswerSaved) -> dict[str, Any]:
                return answer(event.message)

            return event_stream_response(request._request, reply_stream(events, meta=meta, done=done))
        saved = [event.message for event in events if isinstance(event, AnswerSaved)]
        return Response(answer(saved[-1]), status=status.HTTP_201_CREATED)


class SuggestionDecisionApi(APIView):
    """Accept or dismiss one suggestion of a tray answer."""

    @extend_schema(
        request=StateInput,
        responses={200: OpenApiResponse(description="The decided suggestion, where it leads, and any column or run.")},
    )
    def post(self, request: Request, message_id: int, payload_id: str, decision: str) -> Response:
        data = StateInput(data=request.data)
        data.is_valid(raise_exception=True)
        message = selectors.message_for_user(user=request.user, message_id=message_id)
        try:
            outcome = payload_decide(
                user=request.user,
                message=message,
                payload_id=payload_id,
                decision=decision,
                state=data.validated_data["state"],
            )
        except PayloadDecisionError as exc:
            return Response({"error": {"code": exc.code, "message": exc.message}}, status=exc.status)
        body: dict[str, Any] = {"payload": outcome.payload, "redirect": outcome.redirect, "column": None, "run": None}
        if outcome.column is not None:
            body["column"] = {"id": outcome.column.pk, "name": outcome.column.name, "kind": outcome.column.kind}
        if outcome.run is not None:
            body["run"] = {"id": str(outcome.run.pk), "total": outcome.run.total}
        return Response(body)


class AIColumnCreateApi(APIView):
    """Add an AI column to a research page and start evaluating it over the rows the page state shows."""

    @extend_schema(
        request=AIColumnInput, responses={201: OpenApiResponse(description="The column and its evaluation run.")}
    )
    def post(self, request: Request, page: str) -> Response:
        research_page = _page(page)
        data = AIColumnInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            fields = check_ai_column(
                user=request.user,
                page=research_page.name,
                name=values["name"],
                criteria=values["criteria"],
                kind=values["kind"],
            )
        except DjangoValidationError as exc:
            raise _django_error(exc) from exc
        column = ai_column_create(user=request.user, page=research_page.name, **fields)
        item_ids = research_page.build_context(state=values["state"], user=request.user).item_ids
        run = ai_column_run_start(column=column, item_ids=item_ids)
        return Response(
            {
                "column": {"id": column.pk, "name": column.name, "kind": column.kind, "page": column.page},
                "run": {"id": str(run.pk), "total": run.total} if run else None,
            },
            status=status.HTTP_201_CREATED,
        )


class AIColumnRunApi(APIView):
    """Progress of an AI-column run and the cells (answer and justification per row) filled so far."""

    @extend_schema(responses={200: OpenApiResponse(description="Status, counts, progress and the cells by row id.")})
    def get(self, request: Request, run_id: str) -> Response:
        run = selectors.ai_column_run_get(user=request.user, run_id=run_id)
        return Response(run_status(run=run, results=list(selectors.ai_column_run_results(run=run))))


def _snapshot(snapshot: Any) -> dict[str, Any]:
    return dict(SnapshotOutput(snapshot).data)


class SnapshotListCreateApi(APIView):
    """Your Tablizer snapshots (newest first), and saving the search a Tablizer state shows as one."""

    @extend_schema(responses=SnapshotOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response([_snapshot(snapshot) for snapshot in snapshots_for_user(user=request.user)[:100]])

    @extend_schema(request=SnapshotInput, responses={201: SnapshotOutput})
    def post(self, request: Request) -> Response:
        data = SnapshotInput(data=request.data)
        data.is_valid(raise_exception=True)
        searched = parse_state(data.validated_data["state"])
        if not searched:
            raise exceptions.ValidationError({"state": ["Give a Tablizer state with a search, e.g. q=ctDNA."]})
        try:
            snapshot = snapshot_save(
                user=request.user,
                label=data.validated_data["label"],
                query=searched["q"],
                year_from=searched["year_from"],
                year_to=searched["year_to"],
                rows=searched["n"],
            )
        except DjangoValidationError as exc:
            raise exceptions.ValidationError({"label": exc.messages}) from exc
        except EutilsError:
            return Response(
                {"error": {"code": "pubmed_unavailable", "message": "PubMed could not be reached; try again."}},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
                headers={"Retry-After": "30"},
            )
        return Response(_snapshot(snapshot), status=status.HTTP_201_CREATED)


class SnapshotCompareApi(APIView):
    """Two of your snapshots side by side: PMIDs only in A, only in B, and in both."""

    @extend_schema(
        parameters=[
            OpenApiParameter("a", OpenApiTypes.INT, required=True, description="Snapshot A."),
            OpenApiParameter("b", OpenApiTypes.INT, required=True, description="Snapshot B."),
        ],
        responses={200: OpenApiResponse(description="Both snapshots and the three PMID lists.")},
    )
    def get(self, request: Request) -> Response:
        ids = []
        for name in ("a", "b"):
            raw = request.query_params.get(name, "")
            if not (raw.isascii() and raw.isdigit()):
                raise exceptions.ValidationError({name: ["Give the id of one of your snapshots (a whole number)."]})
            ids.append(int(raw))
        chosen: list[TablizerSnapshot] = []
        for name, pk in zip(("a", "b"), ids, strict=True):
            snapshot = snapshot_get(user=request.user, snapshot_id=pk)
            if snapshot is None:
                raise Http404(f"You have no snapshot {pk} (parameter {name}).")
            chosen.append(snapshot)
        comparison = snapshots_compare(a=chosen[0], b=chosen[1])
        return Response(
            {
                "a": _snapshot(comparison.a),
                "b": _snapshot(comparison.b),
                "only_a": comparison.only_a,
                "only_b": comparison.only_b,
                "both": comparison.both,
            }
        )
