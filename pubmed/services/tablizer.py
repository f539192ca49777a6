"""The Tablizer's PubMed search: cached esearch pages, missing abstracts fetched and stored."""

from __future__ import annotations

from dataclasses import dataclass, field

import structlog
from django.db import transaction

from pubmed.models import Abstract
from pubmed.selectors import abstracts_by_pmids
from pubmed.services.ingest import abstracts_ensure, esearch_cached

logger = structlog.get_logger(__name__)

PAGE_ROWS = 20
ESEARCH_PAGE = 100
MAX_ROWS = 500


@dataclass(frozen=True)
class TablizerResult:
    query: str
    count: int
    rows: list[Abstract]
    query_translation: str = ""
    missing: list[str] = field(default_factory=list)

    @property
    def has_more(self) -> bool:
        return len(self.rows) + len(self.missing) < min(self.count, MAX_ROWS)


def _embed_new_chunks() -> None:
    """Queue embedding of the newly stored chunks; a failure here must not break the page."""
    from pubmed.tasks import embed_missing_chunks_task

    try:
        embed_missing_chunks_task.delay()
    except Exception as exc:  # the rows are stored; `manage.py reembed` can add the vectors later
        logger.warning("tablizer_embedding_not_queued", error=f"{type(exc).__name__}: {exc}")


def tablizer_search(*, query: str, year_from: int | None = None, year_to: int | None = None,
                    rows: int = PAGE_ROWS) -> TablizerResult:
    """Return the first `rows` PubMed results for `query` (PubMed syntax passed through) as stored abstracts.

    esearch answers are cached in the database in pages of 100 ids; abstracts not yet stored are
    fetched and stored (their vectors are computed afterwards by a task, so the page is not held up).
    """
    query = " ".join(query.split())
    if not query:
        raise ValueError("Enter a PubMed query, e.g. metformin AND breast cancer.")
    if year_from is not None and year_to is not None and year_from > year_to:
        raise ValueError(f"The start year {year_from} is after the end year {year_to}.")
    rows = max(1, min(rows, MAX_ROWS))
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
