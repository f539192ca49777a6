"""The `search_queries` record: one row per drug-disease pair with its PubMed queries and the PMIDs found."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from pubmed.models import SearchQuery


def pair_key(text: str) -> str:
    """Return a drug or disease name as the record compares it (case- and space-insensitive)."""
    return " ".join(text.split()).lower()


@transaction.atomic
def search_query_record(*, drug: str, disease: str, queries: Sequence[str], pmids: Sequence[str]) -> SearchQuery:
    """Create or update the pair's row: its queries and PMIDs are replaced, `searched_at` moves, `created_at` stays."""
    record, _ = SearchQuery.objects.update_or_create(
        drug=pair_key(drug),
        disease=pair_key(disease),
        defaults={"pubmed_query": "\n".join(queries), "pmids": list(pmids), "searched_at": timezone.now()},
    )
    return record
