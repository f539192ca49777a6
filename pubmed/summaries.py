"""Citation summaries from NCBI esummary JSON (version 2.0): title, journal, year, authors, DOI, PMCID,
publication types and retraction / expression-of-concern links."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evidence.identifiers import PMCID_RE, is_doi, is_pmid, normalize_doi
from evidence.integrity import Integrity, assess_integrity, notice_type
from pubmed.parsers import parse_pub_date


@dataclass(frozen=True)
class PubmedSummary:
    """One PubMed record as esummary describes it: enough to cite it."""

    pmid: str
    title: str
    journal: str
    year: int | None
    authors: list[str]
    doi: str
    pmcid: str = ""
    journal_title: str = ""
    pub_date_raw: str = ""
    publication_types: list[str] = field(default_factory=list)
    corrections: list[dict[str, str]] = field(default_factory=list)

    @property
    def integrity(self) -> Integrity:
        return assess_integrity(publication_types=self.publication_types, corrections=self.corrections)

    @property
    def is_retracted(self) -> bool:
        return self.integrity.retracted


def _corrections(item: dict[str, Any]) -> list[dict[str, str]]:
    """Return the retraction, erratum and concern links of an esummary item's `references` list."""
    found = []
    for entry in item.get("references") or []:
        if not isinstance(entry, dict):
            continue
        kind = notice_type(str(entry.get("reftype", "")))
        if not kind:
            continue
        pmid = str(entry.get("pmid", "") or "").strip()
        found.append(
            {
                "type": kind,
                "pmid": pmid if is_pmid(pmid) else "",
                "source": str(entry.get("refsource", "") or ""),
                "note": str(entry.get("note", "") or ""),
            }
        )
    return found


def summary_from_json(pmid: str, item: dict[str, Any]) -> PubmedSummary:
    """Return the citation summary in one esummary (version 2.0) JSON item."""
    ids = {
        str(entry.get("idtype", "")): str(entry.get("value", ""))
        for entry in item.get("articleids", [])
        if isinstance(entry, dict)
    }
    doi = normalize_doi(ids.get("doi", ""))
    if not is_doi(doi):
        elocation = str(item.get("elocationid", ""))
        doi = normalize_doi(elocation.split("doi:", 1)[1]) if "doi:" in elocation else ""
        doi = doi if is_doi(doi) else ""
    pmcid = ids.get("pmc", "")
    raw_date = str(item.get("pubdate", "") or item.get("epubdate", ""))
    _, year = parse_pub_date(raw_date)
    if year is None:
        _, year = parse_pub_date(str(item.get("sortpubdate", "")))
    return PubmedSummary(
        pmid=pmid,
        title=" ".join(str(item.get("title", "")).split()),
        journal=str(item.get("source", "")),
        year=year,
        authors=[
            str(author.get("name", ""))
            for author in item.get("authors", [])
            if isinstance(author, dict) and author.get("name")
        ],
        doi=doi,
        pmcid=pmcid if PMCID_RE.fullmatch(pmcid) else "",
        journal_title=str(item.get("fulljournalname", "")),
        pub_date_raw=raw_date,
        publication_types=[str(p) for p in item.get("pubtype", [])],
        corrections=_corrections(item),
    )
