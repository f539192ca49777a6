"""Stored PubMed abstracts as the citation checker's sources for PMIDs, DOIs and PMC ids.

Registered with `evidence.services.citation_check` by `PubmedConfig.ready()`. A PMID not stored yet
is fetched through the shared, rate-limited E-utilities client and stored (`abstracts_ensure`), so
the next check of the same text needs no network.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db.models import Q

from evidence.services.cited_sources import (
    CitationSourceUnavailable,
    CitedSource,
    cited_passage,
    identifier_key,
)
from pubmed.clients import EutilsError
from pubmed.models import Abstract
from pubmed.services.ingest import abstracts_ensure


def _source(abstract: Abstract, *, kind: str, key: str) -> CitedSource:
    text = "\n".join(part for part in (abstract.title, abstract.abstract) if part)
    return CitedSource(
        title=abstract.title,
        passages=(cited_passage(kind=kind, key=key, chunk_id="abstract", text=text),),
        retracted=abstract.is_retracted,
    )


def _by_field(kind: str, field_name: str, abstracts: Iterable[Abstract]) -> dict[str, CitedSource]:
    found: dict[str, CitedSource] = {}
    for abstract in abstracts:
        key = identifier_key(kind, getattr(abstract, field_name))
        found.setdefault(key, _source(abstract, kind=kind, key=key))
    return found


def abstracts_for_pmids(pmids: Sequence[str]) -> dict[str, CitedSource]:
    """Return the stored abstract of each PMID, fetching (and storing) those not stored yet.

    Raises CitationSourceUnavailable when PubMed cannot be asked for the missing ones.
    """
    try:
        abstracts = abstracts_ensure(pmids=pmids)
    except EutilsError as exc:
        raise CitationSourceUnavailable(f"PubMed could not be reached: {exc}") from exc
    return _by_field("pmid", "pmid", abstracts)


def abstracts_for_dois(dois: Sequence[str]) -> dict[str, CitedSource]:
    """Return the stored abstracts carrying these DOIs (DOIs compare case-insensitively)."""
    query = Q()
    for doi in dois:
        query |= Q(doi__iexact=doi)
    return _by_field("doi", "doi", Abstract.objects.filter(query)) if dois else {}


def abstracts_for_pmcids(pmcids: Sequence[str]) -> dict[str, CitedSource]:
    """Return the stored abstracts with these PubMed Central ids."""
    return _by_field("pmcid", "pmcid", Abstract.objects.filter(pmcid__in=list(pmcids)))
