"""Evidence an answer may cite: one `EvidenceSource` per citable chunk, and the `EvidenceSet` of a turn.

A library study's key finding, a stored-abstract chunk, a trial record or a tool result each
becomes an `EvidenceSource` in one place (its `from_*` constructor); the `EvidenceSet` resolves
identifiers and citation markers against them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any

from evidence import identifiers
from evidence.articles import Article, SearchHit, article_level
from evidence.findings import CuratedFinding, citable_text, curated_findings
from evidence.levels import LevelAssessment, level_assessment
from evidence.models import Study
from evidence.screening import without_instructions

ORIGIN_LIBRARY, ORIGIN_RETRIEVED, ORIGIN_TOOL = "library", "retrieved", "tool"
LIBRARY_KEY_FINDING_CHUNK = "key_finding"
WITHHELD_TITLE = "(title withheld: it reads as instructions to an AI)"
_AUTHOR_YEAR = re.compile(r"([A-Z][a-z]+(?:-[A-Z][a-z]+)?) (?:19|20)\d\d\b")


def doc_id_for(*, pmid: str = "", doi: str = "", nct: str = "", pmcid: str = "") -> str:
    """Return the document id of a record: `pmid:<PMID>`, else `doi:<doi>`, `nct:<NCT>`, `pmc:<PMCID>`."""
    if pmid:
        return f"pmid:{pmid}"
    if doi:
        return f"doi:{identifiers.doi_key(doi)}"
    if nct:
        return f"nct:{nct.upper()}"
    if pmcid:
        return f"pmc:{pmcid.upper()}"
    raise ValueError("A source needs at least one identifier (PMID, DOI, NCT or PMC id) to get a document id.")


@dataclass(frozen=True)
class EvidenceSource:
    """One citable chunk of evidence: a library study's key finding, an abstract chunk, a tool result."""

    doc_id: str
    chunk_id: str
    origin: str
    title: str = ""
    text: str = ""
    pmid: str = ""
    doi: str = ""
    nct: str = ""
    pmcid: str = ""
    authors: tuple[str, ...] = ()
    authors_short: str = ""
    journal: str = ""
    year: int | None = None
    url: str = ""
    kind: str = ""
    publication_types: tuple[str, ...] = ()
    strength: str = ""
    study_name: str = ""
    names: tuple[str, ...] = ()
    score: float = 0.0
    approved: bool = False
    tool: str = ""
    section: str = ""
    anchor: bool = False
    citation_count: int | None = None
    retracted: bool = False
    expression_of_concern: bool = False
    evidence_level: str = ""
    evidence_level_inferred: bool = False
    # A library study's curated findings, each as quoted (its words are also in `text`).
    findings: tuple[CuratedFinding, ...] = ()

    def __post_init__(self) -> None:
        # Source text is evidence, never instructions: a sentence addressed to the model is dropped,
        # from the text and from the title (which the model and the reader see as well). A library study's
        # curated findings are the exception: reviewed statements, each checked against its public source, and
        # written as guidelines write ("Give an SGLT2 inhibitor ...", "... are not recommended"), which reads to
        # the detector like a directive. Dropped from the text, such a finding was still quoted by the composer
        # and then judged against a text that no longer held it. The study's other fields are screened.
        # A finding line may carry the label the composer gives it ("NAME (journal, year): finding").
        curated = tuple(finding.shown for finding in self.findings)
        text = "\n".join(
            line if line.rstrip().endswith(curated) else without_instructions(line) for line in self.text.split("\n")
        )
        object.__setattr__(self, "text", text if curated else without_instructions(self.text))
        if self.title:
            object.__setattr__(self, "title", without_instructions(self.title) or WITHHELD_TITLE)

    def identifier_keys(self) -> list[tuple[str, str]]:
        """Return (kind, comparison key) for each identifier the source carries."""
        keys = []
        if self.pmid:
            keys.append(("pmid", self.pmid))
        if self.doi:
            keys.append(("doi", identifiers.doi_key(self.doi)))
        if self.nct:
            keys.append(("nct", self.nct.upper()))
        if self.pmcid:
            keys.append(("pmcid", self.pmcid.upper()))
        if self.url:
            keys.append(("url", identifiers.url_key(self.url)))
        return keys

    def label(self, sentence: str = "") -> str:
        """Return how an answer introduces a library sentence: "NAME (journal, year): ", with who vouched for a
        curated finding ("NAME (journal, year; curated finding, awaiting review): "); "" for other sources."""
        if self.origin != ORIGIN_LIBRARY:
            return ""
        detail = ", ".join(str(part) for part in (self.journal, self.year) if part)
        review = next((finding.review for finding in self.findings if finding.shown == sentence), "")
        detail = "; ".join(part for part in (detail, review) if part)
        return f"{self.study_name or self.title}{f' ({detail})' if detail else ''}: "

    def without_label(self, text: str) -> str:
        """Return `text` without the label `label` puts before a library sentence (`text` unchanged otherwise)."""
        name = self.study_name or self.title
        if self.origin != ORIGIN_LIBRARY or not name or not text.startswith(name):
            return text
        if text.startswith(": ", len(name)):
            return text[len(name) + 2 :]
        end = text.find("): ", len(name)) if text.startswith(" (", len(name)) else -1
        return text[end + 3 :] if end != -1 else text

    def labelled_text(self) -> str:
        """Return a library source's citable text with each curated finding (and the key finding) introduced
        as the composer introduces it, so a quoted, labelled sentence is found word for word."""
        lines = [finding.shown for finding in self.findings]
        key_finding = self.text.split("\n")[len(lines) :] if lines else [self.text]
        return "\n".join(f"{self.label(line)}{line}" for line in [*lines, "\n".join(key_finding)] if line)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["authors"] = list(self.authors)
        data["publication_types"] = list(self.publication_types)
        data["names"] = list(self.names)
        return data

    @property
    def level(self) -> LevelAssessment | None:
        """Return the source's level of evidence, or None for a trial registry record or an unknown source."""
        if not self.evidence_level:
            return None
        return level_assessment(self.evidence_level, inferred=self.evidence_level_inferred)

    def with_approval(self, approved: bool) -> EvidenceSource:
        """Return this source admitted (or not) as evidence of the turn."""
        return replace(self, approved=approved)

    @classmethod
    def from_study(cls, study: Study, *, approved: bool = True, score: float = 0.0) -> EvidenceSource:
        """Return a library study as a source: its curated findings and key finding are its citable text."""
        level = study.level
        findings = curated_findings(study)
        return cls(
            doc_id=doc_id_for(pmid=study.pmid, doi=study.doi, nct=study.nct_number),
            chunk_id=LIBRARY_KEY_FINDING_CHUNK,
            origin=ORIGIN_LIBRARY,
            title=study.title,
            text=citable_text(study, findings),
            findings=findings,
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
            evidence_level=level.level,
        )

    @classmethod
    def from_article(
        cls, article: Article, *, origin: str, chunk_id: str, text: str, tool: str = "", section: str = ""
    ) -> EvidenceSource:
        """Return a PubMed record (stored abstract or esummary row) as a source with `text` as its citable text."""
        level = article_level(article)
        return cls(
            doc_id=doc_id_for(pmid=article.pmid),
            chunk_id=chunk_id,
            origin=origin,
            tool=tool,
            title=article.title,
            text=text,
            pmid=article.pmid,
            doi=article.doi or "",
            pmcid=article.pmcid or "",
            authors=tuple(article.authors or ()),
            journal=article.journal or "",
            year=article.year,
            publication_types=tuple(article.publication_types or ()),
            section=section,
            retracted=bool(article.is_retracted),
            expression_of_concern=bool(getattr(article, "has_expression_of_concern", False)),
            evidence_level=level.level,
            evidence_level_inferred=level.inferred,
        )

    @classmethod
    def from_trial(
        cls,
        *,
        nct_id: str,
        title: str,
        text: str,
        year: int | None,
        origin: str,
        chunk_id: str,
        tool: str = "",
        section: str = "",
    ) -> EvidenceSource:
        """Return a ClinicalTrials.gov record as a source."""
        return cls(
            doc_id=doc_id_for(nct=nct_id),
            chunk_id=chunk_id,
            origin=origin,
            tool=tool,
            title=title,
            text=text,
            nct=nct_id,
            journal="ClinicalTrials.gov",
            year=year,
            kind="trial",
            section=section,
        )

    @classmethod
    def from_search_hit(cls, hit: SearchHit, *, score: float, approved: bool = False) -> EvidenceSource:
        """Return a stored-abstract search hit as a source (its best chunk)."""
        return cls(
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
            retracted=bool(hit.is_retracted),
            expression_of_concern=bool(getattr(hit, "has_expression_of_concern", False)),
            evidence_level=hit.evidence_level,
            evidence_level_inferred=hit.evidence_level_inferred,
        )


def _identifier_key(kind: str, value: str) -> tuple[str, str]:
    if kind == "doi":
        return kind, identifiers.doi_key(value)
    if kind in {"nct", "pmcid"}:
        return kind, value.upper().replace(" ", "")
    return kind, value


class EvidenceSet:
    """The sources an answer may cite: this turn's evidence (numbered, in rank order) and the library.

    Numbers (1-based) are the AVAILABLE SOURCES numbering shown to the model. Library sources can
    be cited even when they were not retrieved for this turn: their identifiers are verified.
    """

    def __init__(self, sources: Iterable[EvidenceSource] = (), *, library: Iterable[EvidenceSource] = ()) -> None:
        self.sources: list[EvidenceSource] = []
        self.library: list[EvidenceSource] = []
        self._chunks: dict[tuple[str, str], EvidenceSource] = {}
        self._docs: dict[str, list[EvidenceSource]] = {}
        self._ids: dict[tuple[str, str], str] = {}
        for source in library:
            self._add_library(source)
        for source in sources:
            self.add(source)

    def __len__(self) -> int:
        return len(self.sources)

    def __iter__(self) -> Iterator[EvidenceSource]:
        return iter(self.sources)

    def _index(self, source: EvidenceSource) -> None:
        self._docs.setdefault(source.doc_id, []).append(source)
        for key in source.identifier_keys():
            self._ids.setdefault(key, source.doc_id)

    def _add_library(self, source: EvidenceSource) -> None:
        if source.retracted:
            return
        self.library.append(source)
        self._index(source)

    def add(self, source: EvidenceSource) -> EvidenceSource:
        """Add a source of this turn (deduplicated by doc and chunk id) and return the stored one.

        A retracted source is returned but never stored: its identifiers stay unknown, so a citation
        of it is removed like any unverifiable one.
        """
        if source.retracted:
            return source
        key = (source.doc_id, source.chunk_id)
        existing = self._chunks.get(key)
        if existing is not None:
            return existing
        self.sources.append(source)
        self._chunks[key] = source
        self._index(source)
        return source

    def number(self, number: int) -> EvidenceSource | None:
        """Return the source shown to the model as [number], or None if there is no such source."""
        if 1 <= number <= len(self.sources):
            return self.sources[number - 1]
        return None

    def primary(self, doc_id: str) -> EvidenceSource | None:
        """Return the best source of a document: this turn's highest-ranked chunk, else the library entry."""
        candidates = self._docs.get(doc_id, [])
        turn = [source for source in candidates if self._chunks.get((source.doc_id, source.chunk_id)) is source]
        return turn[0] if turn else (candidates[0] if candidates else None)

    def describe(self, doc_id: str) -> EvidenceSource | None:
        """Return the source whose metadata best describes a document: the library entry, else `primary`."""
        curated = [source for source in self._docs.get(doc_id, []) if source.origin == ORIGIN_LIBRARY]
        return curated[0] if curated else self.primary(doc_id)

    def resolve_identifier(self, kind: str, value: str) -> EvidenceSource | None:
        """Return the source carrying identifier `value` of `kind` (pmid, doi, nct, pmcid), if any."""
        doc_id = self._ids.get(_identifier_key(kind, value))
        return self.primary(doc_id) if doc_id else None

    def resolve_doc(self, doc_id: str, chunk_id: str = "") -> EvidenceSource | None:
        """Return the source for `docId[:chunkId]`: the exact chunk, else the document's best source."""
        kind, _, value = doc_id.partition(":")
        kind = {"pmc": "pmcid", "pmcid": "pmcid"}.get(kind.lower(), kind.lower())
        if kind not in {"pmid", "doi", "nct", "pmcid"} or not value:
            return None
        canonical = self._ids.get(_identifier_key(kind, value.strip()))
        if canonical is None:
            return None
        exact = self._chunks.get((canonical, chunk_id))
        return exact or self.primary(canonical)

    def chunks(self, doc_id: str) -> list[EvidenceSource]:
        """Return every stored chunk of a document known to this set (turn and library), best first."""
        return list(self._docs.get(doc_id, []))

    def origins(self, doc_id: str) -> list[str]:
        return list(dict.fromkeys(source.origin for source in self._docs.get(doc_id, [])))

    def approved(self) -> list[EvidenceSource]:
        """Return this turn's approved sources, one per document, in rank order."""
        seen: set[str] = set()
        chosen = []
        for source in self.sources:
            if source.approved and source.doc_id not in seen:
                seen.add(source.doc_id)
                chosen.append(source)
        return chosen

    def known(self, kind: str, value: str) -> bool:
        return _identifier_key(kind, value) in self._ids

    def name_patterns(self) -> list[tuple[re.Pattern[str], str]]:
        """Return (pattern, doc id) for every library study name and alias."""
        pairs = tuple(
            (name, source.doc_id) for source in self.library for name in (source.study_name, *source.names) if name
        )
        return _compile_names(pairs)


@lru_cache(maxsize=32)
def _compile_names(pairs: tuple[tuple[str, str], ...]) -> list[tuple[re.Pattern[str], str]]:
    """Acronym-like names (DYNAMIC, COSMOS) match case-sensitively, descriptive aliases in any case; a study named
    for its first author ("Reinert 2019 (Signatera CRC)") is also called by the surname, capitalised."""
    compiled = []
    for name, doc_id in dict.fromkeys(pairs):
        cleaned = name.strip()
        acronym_like = any(sum(ch.isupper() for ch in token) >= 2 for token in cleaned.split())
        body = r"\s+".join(re.escape(token) for token in cleaned.split())
        wordings = [(body, 0 if acronym_like else re.IGNORECASE)] if len(cleaned) >= 3 else []
        wordings += [(re.escape(author.group(1)), 0) for author in [_AUTHOR_YEAR.match(cleaned)] if author]
        compiled += [(re.compile(rf"(?<![A-Za-z0-9]){expr}(?![A-Za-z0-9])", flags), doc_id) for expr, flags in wordings]
    return compiled
