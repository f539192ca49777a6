"""What a cited identifier points at: its comparison key, label and link, and its stored text.

The library's studies are read here. Stored PubMed abstracts (fetched from PubMed when missing) and
cached ClinicalTrials.gov records belong to apps above this one (imports run research → chat →
pubmed / trials → evidence), so those apps register their lookups from `AppConfig.ready()` (and PubMed its
embedder, `evidence.embedding`) — as `evidence.identifier_checks` does for the admin's identifier check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial

from django.db.models import Q

from evidence import identifiers
from evidence.claims import PassageText
from evidence.findings import citable_text
from evidence.models import Study
from evidence.selectors import with_findings

KINDS = ("pmid", "doi", "nct", "pmcid")
_LABELS = {"pmid": "PMID", "doi": "DOI", "nct": "", "pmcid": ""}


class CitationSourceUnavailable(Exception):
    """A store that resolves identifiers could not be asked (PubMed unreachable); worth trying again later."""


@dataclass(frozen=True)
class CitedSource:
    """The stored text of one cited identifier, as passages to judge sentences against."""

    title: str
    passages: tuple[PassageText, ...]
    retracted: bool = False


# A lookup takes comparison keys of one kind (see `identifier_key`) and returns those it found.
SourceLookup = Callable[[Sequence[str]], dict[str, CitedSource]]
_lookups: dict[str, dict[str, SourceLookup]] = {}


def cited_source_lookup_register(*, kind: str, lookup: SourceLookup) -> None:
    """Make `lookup` one of the stores that resolve identifiers of `kind` (pmid, doi, nct, pmcid).

    Registering the same function again replaces it, so a repeated `ready()` adds nothing.
    """
    if kind not in KINDS:
        raise ValueError(f"Unknown identifier kind {kind!r}; use one of {', '.join(KINDS)}.")
    _lookups.setdefault(kind, {})[f"{lookup.__module__}.{lookup.__qualname__}"] = lookup


def identifier_key(kind: str, value: str) -> str:
    """Return the comparison key of an identifier: DOIs in lower case, NCT and PMC ids in upper case."""
    if kind == "doi":
        return identifiers.doi_key(value)
    return value.strip().upper() if kind in {"nct", "pmcid"} else value.strip()


def identifier_label(kind: str, key: str) -> str:
    """Return how a reader writes the identifier: "PMID 22663011", "DOI 10.1056/…", "NCT01234567", "PMC123"."""
    prefix = _LABELS[kind]
    return f"{prefix} {key}" if prefix else key


def identifier_url(kind: str, key: str) -> str:
    """Return the direct link of an identifier (PubMed, doi.org, ClinicalTrials.gov, PubMed Central)."""
    return {
        "pmid": identifiers.pubmed_url,
        "doi": identifiers.doi_url,
        "nct": identifiers.ctgov_url,
        "pmcid": identifiers.pmc_url,
    }[kind](key)


@dataclass
class Resolution:
    """What the stores returned for a set of identifiers: found sources, and keys nobody could be asked about."""

    found: dict[tuple[str, str], CitedSource] = field(default_factory=dict)
    unavailable: set[tuple[str, str]] = field(default_factory=set)


def cited_passage(*, kind: str, key: str, chunk_id: str, text: str) -> PassageText:
    """Return a passage of the source cited as (kind, key); quotes from it are labelled with that identifier."""
    return PassageText(doc_id=f"{kind}:{key}", chunk_id=chunk_id, text=text)


def _library_sources(kind: str, keys: Sequence[str]) -> dict[str, CitedSource]:
    """Return library studies carrying these identifiers, their findings and key finding as the citable text."""
    field_name = {"pmid": "pmid", "doi": "doi", "nct": "nct_number", "pmcid": "pmcid"}[kind]
    query = Q()
    for key in keys:
        query |= Q(**{f"{field_name}__iexact": key})
    found: dict[str, CitedSource] = {}
    for study in with_findings(Study.objects.filter(query)):
        key = identifier_key(kind, getattr(study, field_name))
        text = "\n".join(part for part in (study.title, citable_text(study)) if part)
        passage = cited_passage(kind=kind, key=key, chunk_id="key_finding", text=text)
        found[key] = CitedSource(title=study.title or study.study_name, passages=(passage,))
    return found


def _merged(first: CitedSource | None, second: CitedSource) -> CitedSource:
    if first is None:
        return second
    return CitedSource(
        title=first.title or second.title,
        passages=first.passages + second.passages,
        retracted=first.retracted or second.retracted,
    )


def cited_sources_resolve(*, keys: Iterable[tuple[str, str]]) -> Resolution:
    """Return the stored text of each (kind, key): from the library and every registered store.

    A registered store may fetch what it lacks (stored PubMed abstracts fetch missing PMIDs, so the
    next check works offline). A key a failing store could not settle and no other store found is
    `unavailable`; a key no store found is simply absent.
    """
    wanted: dict[str, list[str]] = {}
    for kind, key in dict.fromkeys(keys):
        wanted.setdefault(kind, []).append(key)
    resolution = Resolution()
    for kind, kind_keys in wanted.items():
        failed = False
        lookups: list[SourceLookup] = [partial(_library_sources, kind)]
        lookups += list(_lookups.get(kind, {}).values())
        for lookup in lookups:
            try:
                found = lookup(kind_keys)
            except CitationSourceUnavailable:
                failed = True
                continue
            for key, source in found.items():
                resolution.found[(kind, key)] = _merged(resolution.found.get((kind, key)), source)
        if failed:
            resolution.unavailable |= {(kind, key) for key in kind_keys if (kind, key) not in resolution.found}
    return resolution
