"""What the chat tray sees of a research page: its state, its loaded rows and their AI-column values.

Context builders (one per page, named in `research.registries`) turn the page state - the query
string of the page's own URL - into a `PageContext`. Rows are rebuilt on the server from that
state (stored abstracts, cached trial searches), never taken from the browser, so every row the
model may cite is a record MedCite fetched itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evidence.sources import EvidenceSource

if TYPE_CHECKING:
    from research.models import AIColumn, AIColumnResult
    from research.registries import Page

PROMPT_ITEMS = 20


@dataclass(frozen=True)
class PageItem:
    """One loaded row: its id (PMID or NCT number), the line the model reads, and the citable record.

    `lacks` names the parts of the record a question about the rows may need and this row does not
    have ("abstract", "conditions"), so an answer computed from the rows can say what it could not check.
    """

    item_id: str
    title: str
    year: int | None
    line: str
    source: EvidenceSource
    facets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lacks: tuple[str, ...] = ()

    @property
    def citation(self) -> str:
        return f"[citation:{self.source.doc_id}:{self.source.chunk_id}]"


@dataclass(frozen=True)
class ItemRecord:
    """A row as an AI column reads it: the full record text."""

    item_id: str
    title: str
    text: str


@dataclass(frozen=True)
class ItemError:
    """A row whose record could not be loaded; `message` says why."""

    item_id: str
    message: str


@dataclass
class PageContext:
    """The state of one research page as the tray sees it."""

    page: Page
    state: str
    header: list[str] = field(default_factory=list)
    items: list[PageItem] = field(default_factory=list)
    total: int | None = None
    columns: list[AIColumn] = field(default_factory=list)
    values: dict[int, dict[str, AIColumnResult]] = field(default_factory=dict)
    error: str = ""
    searched: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def item_ids(self) -> list[str]:
        return [item.item_id for item in self.items]

    def column_summary(self, column: AIColumn) -> str:
        """Return "name (boolean): criteria - 3 yes, 1 no" for the prompt."""
        values = self.values.get(column.pk, {})
        known = [values[item_id].value for item_id in self.item_ids if item_id in values]
        if column.is_boolean:
            counts = Counter(known)
            tally = ", ".join(f"{counts[value]} {value}" for value in ("yes", "no", "unclear") if counts[value])
        else:
            tally = f"{len(known)} filled"
        pending = len(self.items) - len(known)
        return f'"{column.name}" ({column.kind}): {column.criteria} - {tally or "no values yet"}' + (
            f"; {pending} row(s) not evaluated" if pending else ""
        )

    def item_line(self, number: int, item: PageItem) -> str:
        """Return the numbered prompt line of a row, AI-column values included."""
        cells = []
        for column in self.columns:
            result = self.values.get(column.pk, {}).get(item.item_id)
            if result is not None:
                cells.append(f"{column.name}: {result.value}")
        return f"{number}. {item.line}" + (f" | {' | '.join(cells)}" if cells else "")

    def prompt_text(self, *, limit: int = PROMPT_ITEMS) -> str:
        """Return the page state as the model reads it: header, AI columns and the first `limit` rows."""
        page = self.page
        lines = [f"PAGE: {page.title} - {page.description}", *self.header]
        if self.error:
            lines.append(f"The page shows an error: {self.error}")
        if self.columns:
            lines.append("AI columns:")
            lines.extend(f"- {self.column_summary(column)}" for column in self.columns)
        else:
            lines.append("AI columns: none")
        if not self.items:
            lines.append(
                f"No {page.item_label_plural} are loaded"
                + (" (the search found none)." if self.searched else " (no search has been run yet).")
            )
            return "\n".join(lines)
        shown = self.items[:limit]
        first = self.items[0]
        lines.append(
            f"First {len(shown)} of {len(self.items)} loaded {page.item_label_plural} "
            f"(cite one as {first.citation.replace(first.item_id, '<id>')}):"
        )
        lines.extend(self.item_line(number, item) for number, item in enumerate(shown, start=1))
        hidden = len(self.items) - len(shown)
        if hidden > 0:
            lines.append(
                f"The other {hidden} loaded {page.item_label_plural} are staged: call get_staged_items "
                f"(offset {len(shown)}, up to 25 per call) to read them before answering about all of them."
            )
        return "\n".join(lines)

    def staged_lines(self, *, start: int) -> list[dict[str, Any]]:
        """Return the rows from `start` on as holding-pen entries (line with AI values, citable source)."""
        return [
            {"item_id": item.item_id, "line": self.item_line(number, item), "source": item.source.as_dict()}
            for number, item in enumerate(self.items[start:], start=start + 1)
        ]


def facet_counts(items: Sequence[PageItem], facet: str) -> Counter[str]:
    """Return how many rows carry each value of `facet` (a row counts once per value)."""
    counts: Counter[str] = Counter()
    for item in items:
        counts.update(set(item.facets.get(facet, ())))
    return counts
