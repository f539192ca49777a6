"""Live PubMed search for a drug/disease pair: normalise, expand, ingest, and remember the search.

Not part of the answer pipeline (its live search is `chat.pipeline.retrieve.search_live`); it is
the drug x disease search the Evidence Scout builds on: the disease name is normalised and checked
against PubMed, the pair is expanded into 5-10 queries,
their results are fetched into the store, and the pair's query and PMIDs are kept in
`search_queries` so asking again within `SEARCH_QUERY_TTL_SECONDS` costs no NCBI request.
Retracted records are never part of the evidence found: they are listed apart, in `retracted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from pubmed.clients import EutilsClient
from pubmed.models import SearchQuery
from pubmed.selectors import retracted_among
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
    retracted: dict[str, str] = field(default_factory=dict)  # PMID → title of retracted records left out

    @property
    def retraction_note(self) -> str:
        """Return one line naming the retracted records left out ("" when there were none)."""
        if not self.retracted:
            return ""
        listed = "; ".join(f"PMID {pmid} ({title})" for pmid, title in self.retracted.items())
        count = len(self.retracted)
        return f"{count} retracted abstract{'s were' if count != 1 else ' was'} excluded: {listed}"


def _without_retracted(pmids: list[str]) -> tuple[list[str], dict[str, str]]:
    retracted = retracted_among(pmids=pmids)
    return [pmid for pmid in pmids if pmid not in retracted], {p: retracted[p] for p in pmids if p in retracted}


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
        # Retractions are checked again on every use: a record may have been retracted since the search.
        kept, retracted = _without_retracted(list(stored.pmids))
        return EvidenceSearchResult(drug=drug, disease=normalised, queries=queries, pmids=kept, cached=True,
                                    retracted=retracted)
    outcome = fetch_and_cache(queries=[q.query for q in queries], max_per_query=max_per_query, client=client)
    if outcome.per_query:  # at least one query answered: remember what was found
        search_query_record(
            drug=drug,
            disease=normalised.normalised,
            pubmed_query="\n".join(q.query for q in queries),
            pmids=outcome.pmids,
        )
    kept, retracted = _without_retracted(outcome.pmids)
    return EvidenceSearchResult(drug=drug, disease=normalised, queries=queries, pmids=kept,
                                cached=False, outcome=outcome, errors=outcome.errors, retracted=retracted)
