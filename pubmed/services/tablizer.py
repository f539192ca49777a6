"""The Tablizer's PubMed search: cached esearch pages, missing abstracts fetched and stored.

When PubMed cannot be reached the search falls back to the local abstract store (full-text), and
the result says so, so the page can show stored articles instead of an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import structlog
from django.db import transaction

from pubmed.clients import EutilsUnavailable
from pubmed.dispatch import embed_missing_chunks_enqueue
from pubmed.models import Abstract
from pubmed.selectors import abstracts_by_pmids
from pubmed.services.ingest import abstracts_ensure, esearch_cached
from pubmed.services.search import SearchFilters, fulltext_search

logger = structlog.get_logger(__name__)

PAGE_ROWS = 20
ESEARCH_PAGE = 100
MAX_ROWS = 500
LOCAL_STORE_MAX_ROWS = 100  # full-text search of the local store returns at most this many
PUBMED_UNREACHABLE_MESSAGE = "PubMed could not be reached; results shown are from the local store; try again."
PUBMED_REFUSED_MESSAGE = (
    "PubMed could not run this search; check the query (field tags such as [tiab] or [mesh], quotes and "
    "brackets) and try again."
)


@dataclass(frozen=True)
class TablizerResult:
    query: str
    count: int
    rows: list[Abstract]
    query_translation: str = ""
    missing: list[str] = field(default_factory=list)
    from_local_store: bool = False

    @property
    def has_more(self) -> bool:
        if self.from_local_store:
            return False
        return len(self.rows) + len(self.missing) < min(self.count, MAX_ROWS)


def _embed_new_chunks() -> None:
    """Queue embedding of the newly stored chunks; a failure here must not break the page."""
    try:
        embed_missing_chunks_enqueue()
    except Exception as exc:  # the rows are stored; `manage.py reembed` can add the vectors later
        logger.warning("tablizer_embedding_not_queued", error=f"{type(exc).__name__}: {exc}")


def tablizer_search(*, query: str, year_from: int | None = None, year_to: int | None = None,
                    rows: int = PAGE_ROWS, local_fallback: bool = True) -> TablizerResult:
    """Return the first `rows` PubMed results for `query` (PubMed syntax passed through) as stored abstracts.

    esearch answers are cached in the database in pages of 100 ids; abstracts not yet stored are
    fetched and stored (their vectors are computed afterwards by a task, so the page is not held up).
    When PubMed is unreachable (EutilsUnavailable) and `local_fallback` is set, the local store is
    searched instead and the result is marked `from_local_store`; otherwise the error is raised.
    """
    query = " ".join(query.split())
    if not query:
        raise ValueError("Enter a PubMed query, e.g. metformin AND breast cancer.")
    if year_from is not None and year_to is not None and year_from > year_to:
        raise ValueError(f"The start year {year_from} is after the end year {year_to}.")
    rows = max(1, min(rows, MAX_ROWS))
    try:
        return _pubmed_search(query=query, year_from=year_from, year_to=year_to, rows=rows)
    except EutilsUnavailable as exc:
        if not local_fallback:
            raise
        logger.warning("tablizer_pubmed_unreachable", query=query, error=str(exc))
        return _local_store_search(query=query, year_from=year_from, year_to=year_to, rows=rows)


def _local_store_search(*, query: str, year_from: int | None, year_to: int | None, rows: int) -> TablizerResult:
    """Return the stored abstracts whose text best matches `query` (PostgreSQL full-text, no PubMed)."""
    filters = SearchFilters(year_from=year_from, year_to=year_to)
    hits = fulltext_search(query, k=min(rows, LOCAL_STORE_MAX_ROWS), filters=filters)
    found = abstracts_by_pmids(pmids=[hit.pmid for hit in hits])
    return TablizerResult(query=query, count=len(found), rows=found, from_local_store=True)


def _pubmed_search(*, query: str, year_from: int | None, year_to: int | None, rows: int) -> TablizerResult:
    mindate = f"{year_from}/01/01" if year_from else None
    maxdate = f"{year_to}/12/31" if year_to else None
    pmids: list[str] = []
    count = 0
    translation = ""
    for start in range(0, rows, ESEARCH_PAGE):
        page = esearch_cached(term=query, retstart=start, retmax=ESEARCH_PAGE, mindate=mindate, maxdate=maxdate)
        count, translation = page.count, page.query_translation or translation
        pmids.extend(page.pmids)
        if len(page.pmids) < ESEARCH_PAGE:
            break
    pmids = pmids[:rows]
    stored_before = set(Abstract.objects.filter(pmid__in=pmids).values_list("pmid", flat=True))
    abstracts_ensure(pmids=pmids, embed=False)
    if set(pmids) - stored_before:
        transaction.on_commit(_embed_new_chunks)
    found = abstracts_by_pmids(pmids=pmids)
    got = {a.pmid for a in found}
    return TablizerResult(
        query=query, count=count, rows=found, query_translation=translation,
        missing=[p for p in pmids if p not in got],
    )
