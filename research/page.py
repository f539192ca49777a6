"""What a research page's view needs from the chat app: the tray and the AI columns of its table.

Pages call `research_context` once with their state and the ids of the rows they show, and get
template context: `tray` (conversation, messages, state) and `ai` (columns with their progress and
filters, and a cell per row and column).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.http import HttpRequest, QueryDict

from chat.models import Conversation, Message
from config.inputs import parse_ascii_int
from research import selectors
from research.ai_columns import ai_columns_unavailable_reason, cell_label
from research.models import AIColumn, AIColumnResult, AIColumnRun, AIColumnValue
from research.registries import Page, page_get
from research.suggestions import page_url

FILTER_PREFIX = "ai_"
Row = TypeVar("Row")


@dataclass(frozen=True)
class AICell:
    """One cell of an AI column: the cached answer, the failure of its last run, or nothing yet."""

    column: AIColumn
    item_id: str
    result: AIColumnResult | None = None
    error: str = ""
    pending: bool = False

    @property
    def value(self) -> str:
        return self.result.value if self.result else ""

    @property
    def label(self) -> str:
        return cell_label(column=self.column, value=self.result.value) if self.result else ""

    @property
    def justification(self) -> str:
        return self.result.justification if self.result else ""


@dataclass(frozen=True)
class ColumnView:
    """An AI column as the page shows it: its run in progress, rows without an answer, filter links."""

    column: AIColumn
    run: AIColumnRun | None
    last_run: AIColumnRun | None
    missing: int
    answered: int
    filter_value: str
    filter_links: list[tuple[str, str, bool]]


@dataclass
class AITable:
    columns: list[AIColumn]
    values: dict[int, dict[str, AIColumnResult]]
    views: list[ColumnView] = field(default_factory=list)
    filters: dict[int, str] = field(default_factory=dict)
    errors: dict[int, dict[str, str]] = field(default_factory=dict)
    active: dict[int, AIColumnRun] = field(default_factory=dict)

    def cells(self, item_id: str) -> list[AICell]:
        cells = []
        for column in self.columns:
            run = self.active.get(column.pk)
            cells.append(
                AICell(
                    column=column,
                    item_id=item_id,
                    result=self.values.get(column.pk, {}).get(item_id),
                    error=self.errors.get(column.pk, {}).get(item_id, ""),
                    pending=run is not None and item_id in run.item_ids,
                )
            )
        return cells

    def keep(self, item_id: str) -> bool:
        """Return True if the row passes every boolean filter set on the page."""
        for column_id, wanted in self.filters.items():
            result = self.values.get(column_id, {}).get(item_id)
            if result is None or result.value != wanted:
                return False
        return True

    def rows(self, items: Iterable[Row], *, key: Callable[[Row], str]) -> list[tuple[Row, list[AICell]]]:
        """Return (row, its AI cells) for every row that passes the filters, in order."""
        return [(item, self.cells(key(item))) for item in items if self.keep(key(item))]


def run_cells(*, run: AIColumnRun, results: Sequence[AIColumnResult]) -> list[AICell]:
    """Return the cells a run has settled so far: its answered rows, then the rows it failed to evaluate."""
    cells = [AICell(column=run.column, item_id=result.item_id, result=result) for result in results]
    answered = {result.item_id for result in results}
    cells += [
        AICell(column=run.column, item_id=error["item_id"], error=error["message"])
        for error in run.errors
        if error["item_id"] not in answered
    ]
    return cells


def column_filters(*, query: QueryDict, columns: Sequence[AIColumn]) -> dict[int, str]:
    """Return {column id: yes|no|unclear} from `ai_<column id>` parameters naming boolean columns."""
    boolean = {column.pk for column in columns if column.is_boolean}
    filters: dict[int, str] = {}
    for key, value in query.items():
        column_id = parse_ascii_int(key[len(FILTER_PREFIX) :]) if key.startswith(FILTER_PREFIX) else None
        if column_id in boolean and value in AIColumnValue.values:
            filters[column_id] = value
    return filters


def _filter_links(page: Page, state: str, filters: dict[int, str], column: AIColumn) -> list[tuple[str, str, bool]]:
    links = []
    for value, label in [("", "All"), *AIColumnValue.choices]:
        chosen = {**filters, column.pk: value}
        params = urlencode([(f"{FILTER_PREFIX}{pk}", wanted) for pk, wanted in sorted(chosen.items()) if wanted])
        query = "&".join(part for part in (state, params) if part)
        url = page_url(page=page.name, state=query, anchor="ai-columns")
        links.append((label, url, filters.get(column.pk, "") == value))
    return links


def ai_table(*, user: Any, page: Page, state: str, item_ids: Sequence[str], query: QueryDict) -> AITable:
    """Return the page's AI columns with their cells for `item_ids`, runs in progress and filters."""
    columns = selectors.ai_columns(user=user, page=page.name)
    table = AITable(columns=columns, values=selectors.ai_column_values(columns=columns, item_ids=item_ids))
    if not columns:
        return table
    table.filters = column_filters(query=query, columns=columns)
    latest = selectors.ai_column_run_latest(columns=columns)
    table.active = {column_id: run for column_id, run in latest.items() if not run.finished}
    for column in columns:
        last = latest.get(column.pk)
        table.errors[column.pk] = {error["item_id"]: error["message"] for error in (last.errors if last else [])}
        answered = sum(1 for item_id in item_ids if item_id in table.values[column.pk])
        table.views.append(
            ColumnView(
                column=column,
                run=table.active.get(column.pk),
                last_run=last,
                missing=len(item_ids) - answered,
                answered=answered,
                filter_value=table.filters.get(column.pk, ""),
                filter_links=_filter_links(page, state, table.filters, column) if column.is_boolean else [],
            )
        )
    return table


@dataclass(frozen=True)
class Tray:
    page: Page
    state: str
    conversation: Conversation | None
    messages: list[Message]


def research_context(request: HttpRequest, *, page: str, state: str, item_ids: Sequence[str]) -> dict[str, Any]:
    """Return the template context of the tray and the AI columns for a research page."""
    research_page = page_get(page)
    user = request.user
    conversation = selectors.tray_conversation(
        user=user, page=page, conversation_id=parse_ascii_int(request.GET.get("conversation", ""))
    )
    return {
        "tray": Tray(
            page=research_page,
            state=state,
            conversation=conversation,
            messages=selectors.tray_messages(conversation=conversation),
        ),
        "ai": ai_table(user=user, page=research_page, state=state, item_ids=item_ids, query=request.GET),
        "ai_unavailable": ai_columns_unavailable_reason(),
    }
