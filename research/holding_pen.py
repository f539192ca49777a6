"""The holding pen: loaded rows that do not fit the prompt, staged server-side for one request.

The model reads them page by page with the `get_staged_items` tool instead of receiving the
whole list. Entries live in the cache (Redis in production) under a random key for an hour.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

PEN_TTL_SECONDS = 3600
PAGE_SIZE = 10
MAX_PAGE_SIZE = 25
_PREFIX = "research:pen:"


class PenExpired(LookupError):
    """The staged rows are gone (expired or never staged)."""


@dataclass(frozen=True)
class StagedPage:
    """One page of staged rows: entries, the offset of the first, and how many are staged in all."""

    entries: list[dict[str, Any]]
    offset: int
    total: int

    @property
    def next_offset(self) -> int | None:
        end = self.offset + len(self.entries)
        return end if end < self.total else None


def pen_stage(*, entries: Sequence[dict[str, Any]], offset: int = 0) -> str:
    """Stage `entries` (rows `offset`... of the page) for this request and return the pen's key."""
    key = uuid.uuid4().hex
    cache.set(_PREFIX + key, {"offset": offset, "entries": list(entries)}, PEN_TTL_SECONDS)
    return key


def pen_page(*, key: str, offset: int, limit: int = PAGE_SIZE) -> StagedPage:
    """Return staged rows from row number `offset` (0-based, counted on the whole page) on, at most `limit`.

    Raises PenExpired when the pen is gone and ValueError for an offset before the staged rows.
    """
    staged = cache.get(_PREFIX + key)
    if staged is None:
        raise PenExpired("The staged rows of this request have expired; ask the question again.")
    first = staged["offset"]
    entries = staged["entries"]
    total = first + len(entries)
    if offset < first:
        raise ValueError(f"Rows before {first} are in the prompt already; staged rows start at offset {first}.")
    limit = max(1, min(limit, MAX_PAGE_SIZE))
    return StagedPage(entries=entries[offset - first : offset - first + limit], offset=offset, total=total)
