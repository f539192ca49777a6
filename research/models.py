"""AI columns of the research pages: a criterion the language model answers for every row.

The tables were created by the chat app; `db_table` keeps their names.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from chat.models import Message


class AIColumnKind(models.TextChoices):
    BOOLEAN = "boolean", "Yes / No / Unclear"
    TEXT = "text", "Short text"


class AIColumnValue(models.TextChoices):
    """The answers a boolean column allows."""

    YES = "yes", "Yes"
    NO = "no", "No"
    UNCLEAR = "unclear", "Unclear"


class AIColumn(models.Model):
    """A column of a research page that the language model fills row by row from a criterion."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ai_columns")
    page = models.CharField(max_length=32, help_text="Registered research page name (tablizer, trialscout).")
    name = models.CharField(max_length=60)
    criteria = models.TextField(help_text="The question asked of every row.")
    kind = models.CharField(max_length=16, choices=AIColumnKind, default=AIColumnKind.BOOLEAN)
    provider = models.CharField(max_length=16, help_text="LLM provider that evaluates the rows.")
    model = models.CharField(max_length=200, blank=True)
    source_message = models.ForeignKey(
        Message,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The assistant message whose suggestion was accepted, if any.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "chat_aicolumn"
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["user", "page", "name"], name="ai_column_unique_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.page})"

    @property
    def is_boolean(self) -> bool:
        return self.kind == AIColumnKind.BOOLEAN


class AIColumnRunStatus(models.TextChoices):
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Done"
    PARTIAL = "partial", "Done, some rows failed"
    FAILED = "failed", "Failed"


AI_COLUMN_RUN_FINISHED = (AIColumnRunStatus.SUCCEEDED, AIColumnRunStatus.PARTIAL, AIColumnRunStatus.FAILED)


class AIColumnRun(models.Model):
    """One evaluation job of a column over a list of rows; rows with a cached result are skipped."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    column = models.ForeignKey(AIColumn, on_delete=models.CASCADE, related_name="runs")
    item_ids = ArrayField(models.CharField(max_length=32), default=list)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0, help_text="Rows processed, failed ones included.")
    failed = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=AIColumnRunStatus, default=AIColumnRunStatus.PENDING)
    errors = models.JSONField(default=list, blank=True, help_text='[{"item_id", "code", "message"}]')
    task_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "chat_aicolumnrun"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.column}: {self.done}/{self.total} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in AI_COLUMN_RUN_FINISHED

    @property
    def progress(self) -> float:
        """Fraction of rows processed, in [0, 1]; 1 once finished."""
        if self.finished:
            return 1.0
        return min(self.done / self.total, 1.0) if self.total else 0.0


class AIColumnResult(models.Model):
    """The model's answer for one row of a column: cached, so a row is never evaluated twice."""

    column = models.ForeignKey(AIColumn, on_delete=models.CASCADE, related_name="results")
    item_id = models.CharField(max_length=32, help_text="PMID or NCT number.")
    value = models.CharField(max_length=300, help_text="yes / no / unclear for boolean columns, else short text.")
    justification = models.CharField(max_length=300, blank=True)
    run = models.ForeignKey(AIColumnRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="results")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "chat_aicolumnresult"
        ordering = ["column_id", "item_id"]
        constraints = [models.UniqueConstraint(fields=["column", "item_id"], name="ai_column_result_unique_item")]

    def __str__(self) -> str:
        return f"{self.column.name} / {self.item_id}: {self.value}"


class ScoutRunStatus(models.TextChoices):
    PENDING = "pending", "Waiting for a worker"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Done"
    FAILED = "failed", "Failed"


class ScoutRun(models.Model):
    """One Evidence Scout job for a drug-disease pair: its input, live progress, stage outputs and result.

    `steps` is the progress shown on the page and in the API; `state` keeps each finished stage's
    output, so a run interrupted (worker killed, NCBI down) resumes at the first unfinished stage.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="scout_runs"
    )
    drug = models.CharField(max_length=200)
    disease = models.CharField(max_length=200)
    profile = models.JSONField(default=dict, blank=True, help_text="Drug profile: synonyms, targets, mechanisms, ...")
    max_pmids = models.PositiveIntegerField(help_text="Most PMIDs fetched per expanded query.")
    status = models.CharField(max_length=16, choices=ScoutRunStatus, default=ScoutRunStatus.PENDING)
    stage = models.CharField(max_length=32, blank=True, help_text="The stage running now (or where it stopped).")
    steps = models.JSONField(default=list, blank=True, help_text='[{"key", "label", "status", "count", "detail"}]')
    state = models.JSONField(default=dict, blank=True, help_text="Output of each finished stage, for resuming.")
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    task_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"], name="scout_run_user_idx")]

    def __str__(self) -> str:
        return f"{self.drug} / {self.disease} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (ScoutRunStatus.SUCCEEDED, ScoutRunStatus.FAILED)

    @property
    def progress(self) -> float:
        """Share of stages finished, in [0, 1]; 1 once the run has finished."""
        if self.finished:
            return 1.0
        done = sum(1 for step in self.steps if step.get("status") in {"done", "skipped"})
        return round(done / len(self.steps), 3) if self.steps else 0.0
