"""Evidence sources of one run: a library study or a stored-abstract chunk as an `EvidenceSource`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evidence.citations import ORIGIN_LIBRARY, ORIGIN_RETRIEVED, EvidenceSource, doc_id_for
from evidence.models import Study

LIBRARY_KEY_FINDING_CHUNK = "key_finding"


def study_source(study: Study, *, approved: bool = True, score: float = 0.0) -> EvidenceSource:
    """Return a library study as an evidence source whose text is its key finding."""
    return EvidenceSource(
        doc_id=doc_id_for(pmid=study.pmid, doi=study.doi, nct=study.nct_number),
        chunk_id=LIBRARY_KEY_FINDING_CHUNK,
        origin=ORIGIN_LIBRARY,
        title=study.title,
        text=study.key_finding,
        pmid=study.pmid,
        doi=study.doi,
        nct=study.nct_number,
        pmcid=study.pmcid,
        authors_short=study.authors_short,
        journal=study.journal,
        year=study.publication_year,
        url=study.url,
        kind=study.kind,
        strength=study.strength_label,
        study_name=study.study_name,
        names=tuple(study.aliases),
        score=score,
        approved=approved,
        anchor=bool(study.anchor_scenarios),
        citation_count=study.citation_count,
    )


def hit_source(hit: Any, *, score: float, approved: bool) -> EvidenceSource:
    """Return a hybrid-search hit (`pubmed.services.search.ChunkHit`) as an evidence source."""
    return EvidenceSource(
        doc_id=hit.doc_id or doc_id_for(pmid=hit.pmid),
        chunk_id=str(hit.chunk_id),
        origin=ORIGIN_RETRIEVED,
        title=hit.title,
        text=hit.text,
        pmid=hit.pmid,
        doi=hit.doi or "",
        pmcid=hit.pmcid or "",
        authors=tuple(hit.authors or ()),
        journal=hit.journal or "",
        year=hit.year,
        publication_types=tuple(hit.publication_types or ()),
        score=score,
        approved=approved,
        section=hit.section or "",
    )


def with_approval(source: EvidenceSource, approved: bool) -> EvidenceSource:
    """Return `source` admitted or not."""
    return replace(source, approved=approved)
