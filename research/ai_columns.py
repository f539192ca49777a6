"""AI columns: a criterion the language model judges for every row of a research page.

A column belongs to a user and a page and outlives searches: its answers are cached per
(column, row), so a row is evaluated once, and a new search only evaluates the rows it adds.
Evaluation is a Celery job (`AIColumnRun`) that records progress row by row; a row that fails
(record unavailable, model error, unreadable answer) is reported on the run and left
uncached for a later retry, and never fails the other rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

import jsonschema
import structlog
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from chat.answer_settings import AnswerSettings, answer_settings
from chat.models import Message
from chat.providers import json_completer
from chat.providers.base import ProviderError
from research.context import ItemError
from research.models import AIColumn, AIColumnKind, AIColumnResult, AIColumnRun, AIColumnRunStatus, AIColumnValue
from research.prompts import ROW_SCHEMAS, build_row_prompt
from research.registries import UnknownPage, page_get

logger = structlog.get_logger(__name__)

NAME_MAX_CHARS = 60
CRITERIA_MIN_CHARS, CRITERIA_MAX_CHARS = 3, 1000
MAX_COLUMNS_PER_PAGE = 10
MAX_RUN_ROWS = 500
VALUE_MAX_CHARS = 300
# Errors that will repeat for every row: stop calling the model and report them on the rest.
FATAL_PROVIDER_CODES = frozenset({"llm_auth", "llm_bad_request"})

# Read by clinicians (page banner, tray reply) and API consumers: what is unavailable and who can change it.
# How to switch a model on is operator knowledge and lives in the README (LLM_PROVIDER and its keys).
LLM_REQUIRED_MESSAGE = (
    "AI columns are not available: they need a language model, and none is switched on in this MedCite. "
    "An administrator can enable one. Until then, the chat tray still builds searches and answers questions "
    "from the loaded rows."
)

JsonCompleter = Callable[[str, dict[str, Any]], dict[str, Any]]


class AIColumnFields(TypedDict):
    """The cleaned fields of a new column, as `check_ai_column` returns them for `ai_column_create`."""

    name: str
    criteria: str
    kind: str


class RowAnswerInvalid(ValueError):
    """The model's answer for a row is not what the column asks for."""


def ai_columns_unavailable_reason(*, settings: AnswerSettings | None = None) -> str:
    """Return why AI columns cannot be added right now, or "" when they can."""
    settings = settings or answer_settings()
    return LLM_REQUIRED_MESSAGE if settings.provider == "extractive" else ""


def check_ai_column(*, user: Any, page: str, name: Any, criteria: Any, kind: Any) -> AIColumnFields:
    """Return the cleaned column fields, or raise ValidationError (a dict of field errors) saying what to fix."""
    reason = ai_columns_unavailable_reason()
    if reason:
        raise ValidationError(reason, code="llm_required")
    try:
        page_get(page)
    except UnknownPage as exc:
        raise ValidationError(str(exc), code="unknown_page") from exc
    errors: dict[str, str] = {}
    name = " ".join(name.split()) if isinstance(name, str) else ""
    criteria = criteria.strip() if isinstance(criteria, str) else ""
    if not name:
        errors["name"] = "Give the column a short name, e.g. RCT or Enrolls over-65s."
    elif "\x00" in name:
        errors["name"] = "The name contains a NUL character (\\x00); remove it."
    elif len(name) > NAME_MAX_CHARS:
        errors["name"] = f"The name is {len(name)} characters long; keep it to {NAME_MAX_CHARS}."
    elif AIColumn.objects.filter(user=user, page=page, name__iexact=name).exists():
        errors["name"] = f"You already have a column named {name!r} on this page; pick another name or delete it."
    if "\x00" in criteria:
        errors["criteria"] = "The criterion contains a NUL character (\\x00); remove it."
    elif len(criteria) < CRITERIA_MIN_CHARS:
        errors["criteria"] = "Write the criterion as a question, e.g. Is this a randomized controlled trial?"
    elif len(criteria) > CRITERIA_MAX_CHARS:
        errors["criteria"] = f"The criterion is {len(criteria)} characters long; keep it to {CRITERIA_MAX_CHARS}."
    if kind not in AIColumnKind.values:
        errors["kind"] = f"The column type must be one of {', '.join(AIColumnKind.values)}, not {kind!r}."
    if not errors and AIColumn.objects.filter(user=user, page=page).count() >= MAX_COLUMNS_PER_PAGE:
        errors["name"] = f"A page holds at most {MAX_COLUMNS_PER_PAGE} AI columns; delete one first."
    if errors:
        raise ValidationError(errors)
    return AIColumnFields(name=name, criteria=criteria, kind=str(kind))


@transaction.atomic
def ai_column_create(
    *, user: Any, page: str, name: str, criteria: str, kind: str, source_message: Message | None = None
) -> AIColumn:
    """Create a column from `check_ai_column` output, recording the provider that will fill it."""
    settings = answer_settings()
    try:
        with transaction.atomic():
            return AIColumn.objects.create(
                user=user,
                page=page,
                name=name,
                criteria=criteria,
                kind=kind,
                provider=settings.provider,
                model=settings.model,
                source_message=source_message,
            )
    except IntegrityError as exc:  # a concurrent request created the same name first
        raise ValidationError({"name": f"You already have a column named {name!r} on this page."}) from exc


def ai_column_delete(*, column: AIColumn) -> None:
    column.delete()


def _one_line(text: Any, limit: int = VALUE_MAX_CHARS) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


_BOOLEAN_WORDS = {
    "yes": AIColumnValue.YES,
    "true": AIColumnValue.YES,
    "y": AIColumnValue.YES,
    "no": AIColumnValue.NO,
    "false": AIColumnValue.NO,
    "n": AIColumnValue.NO,
    "unclear": AIColumnValue.UNCLEAR,
    "unknown": AIColumnValue.UNCLEAR,
    "uncertain": AIColumnValue.UNCLEAR,
    "not reported": AIColumnValue.UNCLEAR,
    "maybe": AIColumnValue.UNCLEAR,
}


def parse_row_answer(*, kind: str, data: Any) -> tuple[str, str]:
    """Return (value, one-line justification) from the model's JSON answer, or raise RowAnswerInvalid."""
    if not isinstance(data, dict):
        raise RowAnswerInvalid("the model did not answer with a JSON object")
    value = data.get("value")
    if kind == AIColumnKind.BOOLEAN:
        if isinstance(value, bool):
            value = "yes" if value else "no"
        elif isinstance(value, str):
            value = _BOOLEAN_WORDS.get(re.sub(r"[^a-z ]", "", value.lower()).strip(), value)
    elif isinstance(value, str):
        value = _one_line(value)
    justification = _one_line(data.get("justification", ""))
    try:
        jsonschema.validate({"value": value, "justification": justification}, ROW_SCHEMAS[kind])
    except jsonschema.ValidationError as exc:
        raise RowAnswerInvalid(f"the model's answer does not fit the column: {exc.message}") from exc
    return str(value), justification


def evaluate_row(*, column: AIColumn, record_text: str, item_label: str, complete: JsonCompleter) -> tuple[str, str]:
    """Ask the model the column's criterion about one row; return (value, justification).

    Raises ProviderError or RowAnswerInvalid.
    """
    prompt = build_row_prompt(criteria=column.criteria, kind=column.kind, item_label=item_label, record=record_text)
    return parse_row_answer(kind=column.kind, data=complete(prompt, ROW_SCHEMAS[column.kind]))


def _finish(run: AIColumnRun, *, succeeded: int) -> None:
    if run.failed == 0:
        run.status = AIColumnRunStatus.SUCCEEDED
    elif succeeded:
        run.status = AIColumnRunStatus.PARTIAL
    else:
        run.status = AIColumnRunStatus.FAILED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at", "done", "failed", "errors"])


def ai_column_run_execute(*, run_id: Any, complete: JsonCompleter | None = None) -> AIColumnRun:
    """Evaluate every row of the run, recording progress after each; safe to run twice.

    Rows answered meanwhile (by another run) are skipped; failed rows are listed in `run.errors`.
    """
    with transaction.atomic():
        run = AIColumnRun.objects.select_for_update().select_related("column").get(pk=run_id)
        if run.finished:
            return run
        run.status = AIColumnRunStatus.RUNNING
        run.started_at = run.started_at or timezone.now()
        run.done, run.failed, run.errors = 0, 0, []
        run.save(update_fields=["status", "started_at", "done", "failed", "errors"])
    column = run.column
    page = page_get(column.page)
    complete = complete or json_completer(answer_settings())
    fatal: dict[str, str] | None = (
        None if complete is not None else {"code": "llm_required", "message": LLM_REQUIRED_MESSAGE}
    )
    succeeded = 0
    for item_id in run.item_ids:
        failure: dict[str, str] | None = None
        if AIColumnResult.objects.filter(column=column, item_id=item_id).exists():
            succeeded += 1
        elif fatal is not None:
            failure = fatal
        else:
            try:
                record = page.load_items(item_ids=[item_id])[item_id]
                if isinstance(record, ItemError):
                    failure = {"code": "record_unavailable", "message": record.message}
                else:
                    assert complete is not None
                    value, justification = evaluate_row(
                        column=column, record_text=record.text, item_label=page.item_label, complete=complete
                    )
                    AIColumnResult.objects.get_or_create(
                        column=column,
                        item_id=item_id,
                        defaults={"value": value, "justification": justification, "run": run},
                    )
                    succeeded += 1
            except ProviderError as exc:
                failure = {"code": exc.code, "message": exc.message}
                if exc.code in FATAL_PROVIDER_CODES:
                    fatal = failure
            except RowAnswerInvalid as exc:
                failure = {"code": "llm_malformed_output", "message": f"Unreadable answer: {exc}."}
            except Exception as exc:  # one broken row must not cost the others
                logger.exception("ai_column_row_failed", run_id=str(run.pk), item_id=item_id)
                failure = {
                    "code": "internal_error",
                    "message": f"The row could not be evaluated ({type(exc).__name__}).",
                }
        run.done += 1
        if failure is not None:
            run.failed += 1
            run.errors.append({"item_id": item_id, **failure})
            logger.warning("ai_column_row_failed", run_id=str(run.pk), item_id=item_id, code=failure["code"])
        AIColumnRun.objects.filter(pk=run.pk).update(done=run.done, failed=run.failed, errors=run.errors)
    _finish(run, succeeded=succeeded)
    logger.info(
        "ai_column_run_complete",
        run_id=str(run.pk),
        column_id=column.pk,
        rows=run.total,
        failed=run.failed,
        status=run.status,
    )
    return run


def cell_label(*, column: AIColumn, value: str) -> str:
    """Return how a cell shows a value: Yes / No / Unclear for boolean columns, the text otherwise."""
    if column.is_boolean:
        return AIColumnValue(value).label if value in AIColumnValue.values else value
    return value


def run_status(*, run: AIColumnRun, results: Sequence[AIColumnResult]) -> dict[str, Any]:
    """Return a run's progress and the answers of its rows, as the progress endpoint serves them."""
    column = run.column
    return {
        "id": str(run.pk),
        "column_id": column.pk,
        "status": run.status,
        "status_label": run.get_status_display(),
        "total": run.total,
        "done": run.done,
        "failed": run.failed,
        "progress": round(run.progress, 4),
        "finished": run.finished,
        "errors": run.errors,
        "results": {
            result.item_id: {
                "value": result.value,
                "label": cell_label(column=column, value=result.value),
                "justification": result.justification,
            }
            for result in results
        },
    }
