"""Full-text lexeme statistics: for every lexeme, how many stored chunks contain it.

Hybrid search reads them (`pubmed_lexemestat`) to pick a query's rarest words; upserts refresh them
when the store has grown or shrunk by `LEXEME_STATS_DRIFT` since the last count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import connection, transaction

if TYPE_CHECKING:
    from django.db.backends.utils import CursorWrapper


# Refresh the lexeme statistics when the chunk count has moved this much since the last refresh.
LEXEME_STATS_DRIFT = 0.25


# Refreshes of the lexeme statistics take this transaction-level advisory lock: two workers finishing
# loads at once would otherwise both delete the old rows and insert the same lexemes (unique violation).
LEXEME_STATS_LOCK = 0x6C657865  # "lexe"


def _lexeme_stats_recount(cursor: CursorWrapper, total: int) -> None:
    cursor.execute("DELETE FROM pubmed_lexemestat")
    cursor.execute(
        "INSERT INTO pubmed_lexemestat (lexeme, ndoc) "
        "SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM pubmed_abstractchunk') "
        "WHERE length(word) <= 255"
    )
    cursor.execute("INSERT INTO pubmed_lexemestat (lexeme, ndoc) VALUES ('', %s)", [total])


def lexeme_stats_refresh() -> int:
    """Recount, for every full-text lexeme, how many chunks contain it; return the chunk total."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LEXEME_STATS_LOCK])
        cursor.execute("SELECT count(*) FROM pubmed_abstractchunk")
        total = cursor.fetchone()[0]
        _lexeme_stats_recount(cursor, total)
    return total


def lexeme_stats_refresh_if_stale() -> None:
    """Refresh the lexeme statistics if the store grew or shrank by LEXEME_STATS_DRIFT since the last count.

    Decided under the refresh lock. While another refresh holds it, nothing is done and nothing waits:
    the recount reads every chunk (seconds on a large store), and a live search storing its abstracts
    inside an answer must not queue behind a bulk load's recount. The next upsert checks the drift again.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [LEXEME_STATS_LOCK])
        if not cursor.fetchone()[0]:
            return
        cursor.execute("SELECT ndoc FROM pubmed_lexemestat WHERE lexeme = ''")
        row = cursor.fetchone()
        recorded = None if row is None else int(row[0])
        cursor.execute("SELECT count(*) FROM pubmed_abstractchunk")
        total = cursor.fetchone()[0]
        if recorded is None or abs(total - recorded) > LEXEME_STATS_DRIFT * max(recorded, 1):
            _lexeme_stats_recount(cursor, total)
