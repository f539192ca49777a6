"""Stored PubMed abstracts as citation records, for the Tablizer's and the answers' exports."""

from __future__ import annotations

from collections.abc import Sequence

from evidence.export import CitationRecord
from pubmed.models import Abstract
from pubmed.selectors import abstracts_by_pmids


def citation_record(abstract: Abstract) -> CitationRecord:
    """Return the citation record of a stored abstract, with every author and the abstract text."""
    return CitationRecord(
        title=abstract.title,
        authors=tuple(abstract.authors),
        journal=abstract.journal,
        journal_title=abstract.journal_title,
        year=abstract.year,
        pmid=abstract.pmid,
        doi=abstract.doi,
        pmcid=abstract.pmcid,
        abstract=abstract.abstract,
        publication_types=tuple(abstract.publication_types),
        keywords=tuple(abstract.keywords),
    )


def citation_records_for_pmids(*, pmids: Sequence[str]) -> list[CitationRecord]:
    """Return the records of the stored abstracts among `pmids`, in the order given (unknown PMIDs skipped)."""
    return [citation_record(abstract) for abstract in abstracts_by_pmids(pmids=pmids)]
