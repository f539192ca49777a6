"""A digest of curated tables' rows, computed by the database, so a reading built from them is rebuilt only when a
row changed.

The curated words, abbreviations, drug classes and tags are read at the start of every question. Fetching every
row and rebuilding the reading from it cost about a tenth of an answer's CPU; the digest (one small query) tells
whether the last reading still holds. It covers every column of every row, so any insert, edit or delete - by a
curator in admin, by `seed_evidence`, by hand in SQL, or inside the transaction that asks - gives another digest.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from django.db import connection

T = TypeVar("T")


def table_digests(*tables: str) -> tuple[str, ...]:
    """Return an MD5 digest of each of `tables`' rows (in one query), then the database's name: two databases
    (a test run's and the development one) may hold the same rows and still be read apart."""
    selects = ", ".join(
        f"(SELECT md5(coalesce(string_agg(row::text, '|' ORDER BY row::text), '')) FROM {table} AS row)"
        for table in map(connection.ops.quote_name, tables)
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {selects}, current_database()")
        return tuple(str(value) for value in cursor.fetchone() or ())


class ReadPerChange(Generic[T]):
    """The last reading built from curated tables, kept with the key it was built for (their digest, and whatever
    else it was read with): `get` builds it again only when the key differs."""

    def __init__(self) -> None:
        self._entry: tuple[Hashable, T] | None = None

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        entry = self._entry
        if entry is not None and entry[0] == key:
            return entry[1]
        value = build()
        self._entry = (key, value)
        return value
