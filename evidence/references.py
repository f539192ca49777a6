"""Reference formatting: direct links only, short author lists, source and quality badges.

A reference is what the reader sees in the references panel and what `ask --json` returns:
`{"pmid"|"doi"|"nct", "url", "title", "authors", "journal", "year", "badges"}`, plus the level of
evidence (`evidence_level`, its label, whether it was inferred, `level_badge`) and `retracted`. The URL always
points at the record itself (PubMed, PMC, DOI resolver, ClinicalTrials.gov, or a guideline page
curated in the library) - never at a search engine or a search-results page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from evidence import identifiers

if TYPE_CHECKING:
    from evidence.sources import EvidenceSource

MAX_LISTED_AUTHORS = 3

# Hosts and paths that are searches, not records: a reference never links to these.
_SEARCH_HOSTS = re.compile(
    r"(^|\.)(google\.[a-z.]+|bing\.com|duckduckgo\.com|yahoo\.com|scholar\.google\.[a-z.]+|baidu\.com)$"
)
_SEARCH_PATHS = re.compile(r"(/search\b|[?&](term|q|query|cond|intr)=)", re.IGNORECASE)

# PubMed publication types -> the quality badge shown for them (highest evidence first).
PUBLICATION_TYPE_BADGES: tuple[tuple[str, str], ...] = (
    ("Practice Guideline", "Guideline"),
    ("Guideline", "Guideline"),
    ("Consensus Development Conference", "Consensus statement"),
    ("Meta-Analysis", "Meta-analysis"),
    ("Systematic Review", "Systematic review"),
    ("Randomized Controlled Trial", "RCT"),
    ("Clinical Trial, Phase III", "Phase 3 trial"),
    ("Clinical Trial, Phase II", "Phase 2 trial"),
    ("Clinical Trial", "Clinical trial"),
    ("Observational Study", "Observational study"),
    ("Multicenter Study", "Multicenter study"),
    ("Review", "Review"),
    ("Case Reports", "Case report"),
)

STUDY_KIND_BADGES = {
    "trial": "Trial",
    "cohort": "Cohort study",
    "guideline": "Guideline",
    "meta-analysis": "Meta-analysis",
    "systematic-review": "Systematic review",
    "protocol": "Trial protocol",
}

ORIGIN_BADGES = {
    "library": "Curated library",
    "retrieved": "PubMed abstract",
    "tool": "Live search",
}


def format_authors(authors: Sequence[str] | str) -> str:
    """Return "First A et al." for more than three authors, otherwise the names joined by commas.

    A string is taken as already formatted (the library's `authors_short`, e.g. "Tie J et al.").
    """
    if isinstance(authors, str):
        return authors.strip()
    names = [name.strip() for name in authors if name and name.strip()]
    if len(names) > MAX_LISTED_AUTHORS:
        return f"{names[0]} et al."
    return ", ".join(names)


def is_direct_url(url: str) -> bool:
    """Return True if `url` is an http(s) link to a record rather than to a search or search results."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return False
    if _SEARCH_HOSTS.search(parts.hostname):
        return False
    return not _SEARCH_PATHS.search(parts.path + ("?" + parts.query if parts.query else ""))


def reference_url(*, pmid: str = "", pmcid: str = "", doi: str = "", nct: str = "", curated_url: str = "") -> str:
    """Return the most direct link for a record: PubMed, PMC, DOI, ClinicalTrials.gov, then a curated page.

    Returns "" when nothing direct is known; a search URL is never returned.
    """
    if pmid and identifiers.is_pmid(pmid):
        return identifiers.pubmed_url(pmid)
    if pmcid and identifiers.PMCID_RE.fullmatch(pmcid):
        return identifiers.pmc_url(pmcid)
    if doi and identifiers.is_doi(doi):
        return identifiers.doi_url(doi)
    if nct and identifiers.is_nct(nct):
        return identifiers.ctgov_url(nct)
    if curated_url and is_direct_url(curated_url):
        return curated_url
    return ""


def quality_badges(*, kind: str = "", publication_types: Iterable[str] = (), strength: str = "") -> list[str]:
    """Return the study-type badge (library kind, else the strongest PubMed type) and the strength badge."""
    badges: list[str] = []
    kind_badge = STUDY_KIND_BADGES.get(kind, "")
    if not kind_badge:
        types = {value.strip().lower() for value in publication_types}
        kind_badge = next((badge for pub_type, badge in PUBLICATION_TYPE_BADGES if pub_type.lower() in types), "")
    if kind_badge:
        badges.append(kind_badge)
    if strength:
        badges.append(f"{strength.capitalize()} strength")
    return badges


RECENT_YEARS = 3
HIGHLY_CITED = 500
_HIGH_EVIDENCE_TYPES = {"randomized controlled trial", "meta-analysis", "systematic review"}


def source_badge(source: EvidenceSource) -> str:
    """Return where the reader will land: Guideline, Meta-Analysis, Systematic Review, Clinical Trial,
    Cochrane, PMC or PubMed."""
    types = {value.lower() for value in source.publication_types}
    if source.kind == "guideline" or types & {"practice guideline", "guideline"}:
        return "Guideline"
    if source.kind == "meta-analysis" or "meta-analysis" in types:
        return "Meta-Analysis"
    if "cochrane" in source.journal.lower():
        return "Cochrane"
    if source.kind == "systematic-review" or "systematic review" in types:
        return "Systematic Review"
    if source.nct and not source.pmid:
        return "Clinical Trial"
    if source.pmcid and not source.pmid:
        return "PMC"
    return "PubMed"


def evidence_quality_badges(source: EvidenceSource, *, today_year: int | None = None) -> list[str]:
    """Return the quality badges earned from stored data (strength, kind, year, anchors, citations)."""
    import datetime

    today_year = today_year or datetime.date.today().year
    types = {value.lower() for value in source.publication_types}
    badges = []
    high_evidence = source.kind in {"trial", "meta-analysis", "systematic-review"} or bool(types & _HIGH_EVIDENCE_TYPES)
    if source.strength == "high" and high_evidence:
        badges.append("Gold Standard")
    if source.year and today_year - source.year <= RECENT_YEARS:
        badges.append("Recent")
    if source.citation_count and source.citation_count >= HIGHLY_CITED:
        badges.append("Highly Cited")
    if source.kind == "guideline":
        badges.append("Practical Guidance")
    if source.kind == "trial" and source.strength == "high" and source.origin == "library":
        badges.append("Landmark Trial")
    if source.kind == "guideline" and source.anchor:
        badges.append("Anchor Guideline")
    return badges


# At most this many badges beside a reference, the level of evidence counted; the one quality badge shown
# is the first of these it earned. "Practical Guidance" says what "Guideline" already says.
MAX_BADGES = 3
QUALITY_BADGE_ORDER = ("Landmark Trial", "Anchor Guideline", "Gold Standard", "Highly Cited", "Recent")


def shown_badges(*, study_type: str, origins: Sequence[str], quality: Sequence[str]) -> list[str]:
    """Return the badges a reader sees beside a reference besides its level of evidence: the study type (only
    where no level is shown, which says it), where it came from, and its best quality badge - at most
    MAX_BADGES with the level, none saying what another says.

    `study_type` is "" when the level of evidence is shown; "PubMed", where the link lands, is not a type
    (the identifiers already say it).
    """
    shown = [study_type] if study_type and study_type != "PubMed" else []
    shown += list(origins[:1])
    shown += [badge for badge in QUALITY_BADGE_ORDER if badge in quality][:1]
    unique: list[str] = []
    for badge in shown:
        if badge.lower() not in {kept.lower() for kept in unique}:
            unique.append(badge)
    return unique[: MAX_BADGES - (0 if study_type else 1)]


def _fallback_title(source: EvidenceSource) -> str:
    if source.pmid:
        return f"PubMed record {source.pmid}"
    if source.nct:
        return f"ClinicalTrials.gov record {source.nct}"
    return f"DOI {source.doi}" if source.doi else source.doc_id


def format_reference(source: EvidenceSource, *, origins: Iterable[str] = ()) -> dict[str, Any]:
    """Return the reference dict for one cited source (identifiers present, direct URL, badges).

    `origins` lists every place the source came from this turn (library, retrieved, tool); each
    gets a source badge, library first.
    """
    reference: dict[str, Any] = {}
    if source.pmid:
        reference["pmid"] = source.pmid
    if source.doi:
        reference["doi"] = source.doi
    if source.nct:
        reference["nct"] = source.nct
    if source.pmcid:
        reference["pmcid"] = source.pmcid
    if source.origin == "library" and source.url and is_direct_url(source.url):
        # A curated link (e.g. a guideline's own page) is the library's chosen destination: keep it exactly.
        reference["url"] = source.url
    else:
        reference["url"] = reference_url(
            pmid=source.pmid, pmcid=source.pmcid, doi=source.doi, nct=source.nct, curated_url=source.url
        )
    reference["title"] = source.title or source.study_name or _fallback_title(source)
    reference["authors"] = format_authors(source.authors_short or list(source.authors))
    reference["journal"] = source.journal
    reference["year"] = source.year
    if source.study_name:
        reference["study_name"] = source.study_name
    seen_origins = list(dict.fromkeys([*origins, source.origin]))
    seen_origins.sort(key=lambda origin: list(ORIGIN_BADGES).index(origin) if origin in ORIGIN_BADGES else 99)
    reference["source_badge"] = source_badge(source)
    reference["quality_badges"] = evidence_quality_badges(source)
    level = source.level
    kind_badges = quality_badges(kind=source.kind, publication_types=source.publication_types)
    reference["badges"] = shown_badges(
        study_type="" if level is not None else next(iter(kind_badges), reference["source_badge"]),
        origins=[ORIGIN_BADGES[origin] for origin in seen_origins if origin in ORIGIN_BADGES],
        quality=reference["quality_badges"],
    )
    if level is not None:
        reference["evidence_level"] = level.level
        reference["evidence_level_label"] = level.label
        reference["evidence_level_inferred"] = level.inferred
        reference["level_badge"] = level.badge
    reference["retracted"] = source.retracted
    if source.expression_of_concern:
        reference["expression_of_concern"] = True
    return reference
