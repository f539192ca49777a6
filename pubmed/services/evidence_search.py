"""Live PubMed search for a drug/disease pair: normalise, expand, ingest, and remember the search.

Not part of the answer pipeline (its live search is `chat.pipeline.retrieve.search_live`); it is
the drug x disease search the Evidence Scout builds on: the disease name is normalised and checked
against PubMed, the pair is expanded into 5-10 queries,
their results are fetched into the store, and the pair's query and PMIDs are kept in
`search_queries` so asking again within `SEARCH_QUERY_TTL_SECONDS` costs no NCBI request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from pubmed.clients import EutilsClient
from pubmed.models import SearchQuery
from pubmed.services.expand import (
    ExpandedQuery,
    ExpansionProfile,
    NormalisedDisease,
    expand_search_terms,
    normalise_disease_name,
)
from pubmed.services.ingest import IngestionOutcome, fetch_and_cache

SEARCH_QUERY_TTL_SECONDS = 5 * 24 * 3600


@dataclass(frozen=True)
class EvidenceSearchResult:
    drug: str
    disease: NormalisedDisease
    queries: list[ExpandedQuery]
    pmids: list[str]
    cached: bool
    outcome: IngestionOutcome | None = None
    errors: list[str] = field(default_factory=list)


@transaction.atomic
def search_query_record(*, drug: str, disease: str, pubmed_query: str, pmids: list[str]) -> SearchQuery:
    """Create or replace the stored search for the (drug, disease) pair (compared case-insensitively)."""
    record, _ = SearchQuery.objects.update_or_create(
        drug=" ".join(drug.split()).lower(),
        disease=" ".join(disease.split()).lower(),
        defaults={"pubmed_query": pubmed_query, "pmids": pmids, "searched_at": timezone.now()},
    )
    return record


def evidence_search(
    *,
    drug: str,
    disease: str,
    profile: ExpansionProfile | Mapping[str, object] | None = None,
    max_per_query: int = 20,
    client: EutilsClient | None = None,
) -> EvidenceSearchResult:
    """Find and store PubMed evidence for `drug` treating `disease`; return every PMID found."""
    drug = " ".join(drug.split())
    if not drug:
        raise ValueError("The drug name is empty.")
    normalised = normalise_disease_name(disease, client=client)
    queries = expand_search_terms(drug, normalised.normalised, profile)
    fresh_after = timezone.now() - timedelta(seconds=SEARCH_QUERY_TTL_SECONDS)
    stored = SearchQuery.objects.filter(
        drug=drug.lower(), disease=normalised.normalised.lower(), searched_at__gte=fresh_after
    ).first()
    if stored is not None:
        return EvidenceSearchResult(drug=drug, disease=normalised, queries=queries, pmids=list(stored.pmids),
                                    cached=True)
    outcome = fetch_and_cache(queries=[q.query for q in queries], max_per_query=max_per_query, client=client)
    if outcome.per_query:  # at least one query answered: remember what was found
        search_query_record(
            drug=drug,
            disease=normalised.normalised,
            pubmed_query="\n".join(q.query for q in queries),
            pmids=outcome.pmids,
        )
    return EvidenceSearchResult(drug=drug, disease=normalised, queries=queries, pmids=outcome.pmids,
                                cached=False, outcome=outcome, errors=outcome.errors)
