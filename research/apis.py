"""`/api/v1/scout/`: start an Evidence Scout run (a Celery job), follow its progress, read its EvidenceSummary."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from research.models import ScoutRun, ScoutRunStatus
from research.scout.runs import check_scout_input, scout_run_create, scout_run_resume
from research.scout.selectors import scout_run_get, scout_runs_for


class DrugProfileSerializer(serializers.Serializer):
    synonyms = serializers.ListField(child=serializers.CharField(), required=False, help_text="Brand and code names.")
    targets = serializers.ListField(child=serializers.CharField(), required=False, help_text="Target gene symbols.")
    mechanisms = serializers.ListField(child=serializers.CharField(), required=False,
                                       help_text="Mechanisms of action.")
    atc_codes = serializers.ListField(child=serializers.CharField(), required=False)
    atc_descriptions = serializers.ListField(child=serializers.CharField(), required=False,
                                             help_text="ATC class descriptions, e.g. protein kinase inhibitors.")
    drug_type = serializers.CharField(required=False, help_text="e.g. small molecule, monoclonal antibody.")


class ScoutInputSerializer(serializers.Serializer):
    drug = serializers.CharField(help_text="Drug name, e.g. gefitinib.")
    disease = serializers.CharField(help_text="Disease name, e.g. non-small cell lung cancer.")
    profile = DrugProfileSerializer(required=False, help_text="Optional drug profile; every field optional.")
    max_pmids = serializers.IntegerField(required=False, help_text="Most PMIDs fetched per query (1-500).")


class KeyFindingSerializer(serializers.Serializer):
    text = serializers.CharField()
    pmids = serializers.ListField(child=serializers.CharField(), help_text="PMIDs of the top five it cites.")
    quote = serializers.CharField(help_text="The cited abstract's sentence(s) supporting it.")


class ScoutQuerySerializer(serializers.Serializer):
    axis = serializers.CharField()
    query = serializers.CharField()
    pmids_found = serializers.IntegerField(allow_null=True)


class ScoutResultSerializer(serializers.Serializer):
    """The result document (documentation only: it is stored on the run as JSON)."""

    summary = serializers.CharField()
    study_count = serializers.IntegerField()
    study_types = serializers.DictField(child=serializers.IntegerField())
    strength = serializers.ChoiceField(choices=["high", "moderate", "low", "insufficient"])
    key_findings = KeyFindingSerializer(many=True)
    supporting_pmids = serializers.ListField(child=serializers.CharField())
    queries = ScoutQuerySerializer(many=True)
    disease = serializers.DictField(help_text="original, normalised, count, source, broadened, tried")
    pmid_count = serializers.IntegerField()
    top20 = serializers.ListField(child=serializers.DictField())
    top5 = serializers.ListField(child=serializers.DictField())
    reranker = serializers.ChoiceField(choices=["llm", "cross-encoder", "lexical"])
    synthesis = serializers.ChoiceField(choices=["llm", "extractive"])
    removed = serializers.ListField(child=serializers.DictField(), help_text="Statements removed, with reasons.")
    timings = serializers.DictField(child=serializers.FloatField(allow_null=True), help_text="Seconds per stage.")


class ScoutStepSerializer(serializers.Serializer):
    key = serializers.CharField()
    status = serializers.ChoiceField(choices=["pending", "running", "done", "failed"])
    count = serializers.IntegerField(allow_null=True)
    detail = serializers.CharField(allow_blank=True)
    seconds = serializers.FloatField(allow_null=True)

    def get_fields(self) -> dict[str, serializers.Field]:
        # "label" is also the name of a Field attribute, so it cannot be declared as a class attribute.
        fields = super().get_fields()
        fields = {"key": fields.pop("key"), "label": serializers.CharField(), **fields}
        return fields


class ScoutRunOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    progress = serializers.FloatField()
    steps = ScoutStepSerializer(many=True)
    result = ScoutResultSerializer(allow_null=True)

    class Meta:
        model = ScoutRun
        fields = ("id", "url", "status", "stage", "progress", "steps", "drug", "disease", "profile", "max_pmids",
                  "result", "error", "attempts", "created_at", "started_at", "finished_at")

    def get_url(self, run: ScoutRun) -> str:
        return reverse("research-api-scout-detail", args=[run.pk], request=self.context.get("request"))

    def to_representation(self, run: ScoutRun) -> dict[str, Any]:
        data = super().to_representation(run)
        data["result"] = run.result  # stored as produced: the schema above documents it
        return data


class ScoutListCreateApi(APIView):
    """Start an Evidence Scout run for a drug and a disease, or list your recent runs."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=ScoutInputSerializer, responses={202: ScoutRunOutputSerializer},
                   summary="Start an Evidence Scout run (returns the job; poll its url)")
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ValidationError("Send a JSON object, e.g. {\"drug\": \"gefitinib\", \"disease\": \"NSCLC\"}.")
        data = request.data
        try:
            cleaned = check_scout_input(drug=data.get("drug"), disease=data.get("disease"),
                                        profile=data.get("profile"), max_pmids=data.get("max_pmids"))
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict) from exc
        run = scout_run_create(user=request.user, **cleaned)
        run.refresh_from_db()
        body = ScoutRunOutputSerializer(run, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})

    @extend_schema(responses={200: ScoutRunOutputSerializer(many=True)}, summary="Your recent Evidence Scout runs")
    def get(self, request: Request) -> Response:
        runs = scout_runs_for(user=request.user)
        return Response(ScoutRunOutputSerializer(runs, many=True, context={"request": request}).data)


class ScoutDetailApi(APIView):
    """Progress (steps and counts) and, once done, the EvidenceSummary of one scout run."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(parameters=[OpenApiParameter("run_id", str, OpenApiParameter.PATH)],
                   responses={200: ScoutRunOutputSerializer}, summary="Progress and result of a scout run")
    def get(self, request: Request, run_id: Any) -> Response:
        run = scout_run_get(run_id=run_id, user=request.user)
        if run is None:
            raise NotFound(f"No scout run {run_id} visible to you.")
        return Response(ScoutRunOutputSerializer(run, context={"request": request}).data)


class ScoutResumeApi(APIView):
    """Queue a failed scout run again: it continues at its first unfinished stage (409 if it has not failed)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(parameters=[OpenApiParameter("run_id", str, OpenApiParameter.PATH)], request=None,
                   responses={202: ScoutRunOutputSerializer}, summary="Resume a failed scout run")
    def post(self, request: Request, run_id: Any) -> Response:
        run = scout_run_get(run_id=run_id, user=request.user, for_write=True)
        if run is None:
            raise NotFound(f"No scout run {run_id} of yours; only the user who started a run may resume it.")
        if run.status != ScoutRunStatus.FAILED:
            raise Conflict(f"Scout run {run_id} is {run.status}; only a failed run can be resumed.")
        run = scout_run_resume(run=run)
        run.refresh_from_db()
        return Response(ScoutRunOutputSerializer(run, context={"request": request}).data,
                        status=status.HTTP_202_ACCEPTED)


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"
    default_detail = "The request conflicts with the run's state."
