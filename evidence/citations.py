"""Citation extraction, verification, repair and confidence for generated answers.

Model output is never trusted: every identifier in an answer (citation markers, PMIDs, DOIs,
NCT and PMC ids, PubMed/DOI/ClinicalTrials.gov links, numbered markers) is resolved against
the evidence of this turn - retrieved chunks, library studies, tool results. What resolves
becomes a numbered marker pointing at a reference; what does not is removed from the text,
never linked, and logged as `citation_hallucinated`.

The functions here are pure (no database): callers build an `EvidenceSet` from what they
retrieved and from the library, then call `verify_answer`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import structlog

from evidence import identifiers
from evidence.references import format_reference

logger = structlog.get_logger("medcite.citations")

RED, YELLOW, GREEN = "RED", "YELLOW", "GREEN"
GREEN_MIN_CITATIONS = 2
GREEN_MIN_DENSITY = 0.3

ORIGIN_LIBRARY, ORIGIN_RETRIEVED, ORIGIN_TOOL = "library", "retrieved", "tool"

DEFAULT_ABSTENTION = (
    "I could not find enough verifiable evidence to answer this question. None of the curated "
    "library studies or the stored PubMed abstracts addresses it closely enough to cite, so I "
    "would rather not guess. Try rephrasing with the condition, the intervention and the outcome "
    "you care about, or search PubMed for primary studies."
)
SOURCES_HEADING = "**Sources**"

# Placeholders stand for a resolved citation while the text is rewritten; the brackets are
# characters no model output keeps (they are stripped from the input first).
_OPEN, _CLOSE = "\u27e6", "\u27e7"
_PLACEHOLDER = re.compile(rf"{_OPEN}(\d+){_CLOSE}")


# --- Evidence -------------------------------------------------------------------------------------


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
        return keys

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["authors"] = list(self.authors)
        data["publication_types"] = list(self.publication_types)
        data["names"] = list(self.names)
        return data


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
        self.library.append(source)
        self._index(source)

    def add(self, source: EvidenceSource) -> EvidenceSource:
        """Add a source of this turn (deduplicated by doc and chunk id) and return the stored one."""
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
        return (turn or candidates or [None])[0]

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
    compiled = []
    for name, doc_id in dict.fromkeys(pairs):
        cleaned = name.strip()
        if len(cleaned) < 3:
            continue
        # Acronym-like names (DYNAMIC, DELIVER, COSMOS) are ordinary words in lower case: match
        # them case-sensitively; descriptive aliases match in any case.
        acronym_like = any(sum(ch.isupper() for ch in token) >= 2 for token in cleaned.split())
        flags = 0 if acronym_like else re.IGNORECASE
        body = r"\s+".join(re.escape(token) for token in cleaned.split())
        compiled.append((re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])", flags), doc_id))
    return compiled


# --- Extraction --------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<citation>\[\s*citation\s*:\s*[^\[\]\n]{1,300}?\s*\])
  | https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(?P<pubmed_url>\d{1,9})/?
  | https?://(?:www\.)?(?:pmc\.ncbi\.nlm\.nih\.gov/articles|ncbi\.nlm\.nih\.gov/pmc/articles)/(?P<pmc_url>PMC\d{1,9})/?
  | https?://(?:www\.)?clinicaltrials\.gov/(?:ct2/show|study)/(?P<ctgov_url>NCT\d{8})/?
  | https?://(?:dx\.)?doi\.org/(?P<doi_url>10\.\d{4,9}(?:\.\d+)*/[^\s<>"\[\]]+)
  | \b(?:PMIDs?\s*(?:\#|:|=|no\.?)?|PubMed\s+IDs?\s*[:\#]?|PubMed\s*[:\#])\s*
        (?P<pmid>\d{1,9}(?:\s*(?:,|;|and|&)\s*(?:PMID\s*:?\s*)?\d{1,9})*)\b
  | [\(\[](?P<bare_pmid>\d{7,9})[\)\]]
  | \b(?P<pmcid>PMC\d{1,9})\b
  | \b(?P<nct>NCT\s?\d{8})\b
  | (?:\bdoi\s*:?\s*)?(?P<doi>\b10\.\d{4,9}(?:\.\d+)*/[^\s<>"\[\]]+)
  | \[(?P<numeric>\d{1,3}(?:\s*(?:,|;|\u2013|-|&|and)\s*\d{1,3})*)\]
    """,
    re.IGNORECASE | re.VERBOSE,
)
_CITATION_PART = re.compile(r"^(?:citation\s*:\s*)?(?P<kind>pmid|doi|nct|pmcid|pmc)\s*:\s*(?P<rest>.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    """One identifier or marker found in text: where, in which form, and what it resolved to."""

    start: int
    end: int
    form: str
    value: str
    source: EvidenceSource | None


def _trim_doi(value: str) -> str:
    value = value.rstrip(".,;:'\"")
    while value.endswith(")") and value.count(")") > value.count("("):
        value = value[:-1].rstrip(".,;:")
    return value


def _numbers(spec: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*(?:,|;|&|and)\s*", spec):
        bounds = re.split(r"\s*[\u2013-]\s*", part)
        if len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 20:
                numbers.extend(range(low, high + 1))
                continue
        numbers.extend(int(bound) for bound in bounds if bound.isdigit())
    return numbers


def _resolve_citation_part(part: str, evidence: EvidenceSet) -> EvidenceSource | None:
    part = part.strip()
    if part.isdigit():
        return evidence.number(int(part))
    match = _CITATION_PART.match(part)
    if not match:
        return None
    kind, rest = match.group("kind").lower(), match.group("rest").strip()
    # Chunk ids may themselves contain colons ("35657320:0"): try the whole rest as the document
    # id first, then every shorter prefix, the remainder being the chunk id.
    cuts = [len(rest)] + [index for index in range(len(rest) - 1, 0, -1) if rest[index] == ":"]
    for cut in cuts:
        found = evidence.resolve_doc(f"{kind}:{rest[:cut]}", rest[cut + 1 :].strip())
        if found is not None:
            return found
    return None


def extract_mentions(text: str, evidence: EvidenceSet) -> list[Mention]:
    """Return every citation marker and identifier mention in `text`, each resolved or not (source None)."""
    mentions: list[Mention] = []
    for match in _TOKEN.finditer(text):
        form = match.lastgroup or ""
        start, end = match.span()
        raw = match.group(form)
        if form == "citation":
            inner = raw.strip()[1:-1].split(":", 1)[1]
            for part in re.split(r"[,;]", inner):
                if part.strip():
                    mentions.append(
                        Mention(start, end, "citation", part.strip(), _resolve_citation_part(part, evidence))
                    )
            continue
        if form in {"doi", "doi_url"}:
            value = _trim_doi(raw)
            end = match.start(form) + len(value)
            mentions.append(Mention(start, end, "doi", value, evidence.resolve_identifier("doi", value)))
            continue
        if form == "pmid":
            for value in re.findall(r"\d{1,9}", raw):
                mentions.append(Mention(start, end, "pmid", value, evidence.resolve_identifier("pmid", value)))
            continue
        if form in {"pubmed_url", "bare_pmid"}:
            mentions.append(Mention(start, end, "pmid", raw, evidence.resolve_identifier("pmid", raw)))
            continue
        if form in {"pmcid", "pmc_url"}:
            value = raw.upper()
            mentions.append(Mention(start, end, "pmcid", value, evidence.resolve_identifier("pmcid", value)))
            continue
        if form in {"nct", "ctgov_url"}:
            value = raw.upper().replace(" ", "")
            mentions.append(Mention(start, end, "nct", value, evidence.resolve_identifier("nct", value)))
            continue
        if form == "numeric":
            for number in _numbers(raw):
                mentions.append(Mention(start, end, "number", str(number), evidence.number(number)))
    return mentions


# --- Rewriting ----------------------------------------------------------------------------------

_ABBREVIATIONS = {
    "al.",
    "e.g.",
    "i.e.",
    "vs.",
    "approx.",
    "fig.",
    "no.",
    "dr.",
    "cf.",
    "incl.",
    "ca.",
    "st.",
    "et.",
}
_BOUNDARY = re.compile(r"(?<=[.!?])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*]+\*\*:?|__[^_]+__:?|[A-Z][A-Za-z /&'-]{0,60}:)\s*$")
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+)")
_REFERENCE_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*"
    r"(?:references|sources|bibliography|citations|works cited)"
    r"\s*:?\s*(?:\*\*|__)?\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z]{2,}")


class _Placeholders:
    """The sources cited in a text being rewritten; placeholder n stands for `sources[n]`."""

    def __init__(self) -> None:
        self.sources: list[EvidenceSource] = []
        self.forms: list[str] = []

    def token(self, source: EvidenceSource, form: str) -> str:
        self.sources.append(source)
        self.forms.append(form)
        return f"{_OPEN}{len(self.sources) - 1}{_CLOSE}"

    def docs_in(self, text: str) -> list[str]:
        return list(dict.fromkeys(self.sources[int(n)].doc_id for n in _PLACEHOLDER.findall(text)))


def _rewrite(text: str, evidence: EvidenceSet, placeholders: _Placeholders, removed: list[dict[str, str]]) -> str:
    """Replace resolved mentions by placeholders and delete unresolved ones, recording what was removed."""
    mentions = extract_mentions(text, evidence)
    pieces: list[str] = []
    cursor = 0
    by_span: dict[tuple[int, int], list[Mention]] = {}
    for mention in mentions:
        by_span.setdefault((mention.start, mention.end), []).append(mention)
    for (start, end), group in sorted(by_span.items()):
        if start < cursor:
            continue
        pieces.append(text[cursor:start])
        replacement = []
        for mention in group:
            if mention.source is None:
                removed.append({"form": mention.form, "value": mention.value})
            else:
                replacement.append(placeholders.token(mention.source, mention.form))
        pieces.append(" " + "".join(replacement) if replacement else "")
        cursor = end
    pieces.append(text[cursor:])
    return _tidy("".join(pieces))


_MARKER_GROUP = re.compile(rf"[\(\[]\s*((?:{_OPEN}\d+{_CLOSE}[\s,;]*(?:and\s+|&\s*)?)+)\s*[\)\]]")
_EMPTY_GROUP = re.compile(
    r"[\(\[]\s*(?:(?:PMIDs?|DOI|NCT|PMC|PubMed|see|refs?\.?|references?|e\.g\.|and|&)\b|[\s:,;.#=-])*[\)\]]",
    re.IGNORECASE,
)
_DANGLING_LABEL = re.compile(r"\b(?:PMIDs?|DOI|PubMed ID)\s*[:#=]?\s*(?=[,.;)\]]|$)", re.IGNORECASE | re.MULTILINE)


def _tidy(text: str) -> str:
    text = _MARKER_GROUP.sub(lambda m: " " + "".join(re.findall(rf"{_OPEN}\d+{_CLOSE}", m.group(1))), text)
    text = _EMPTY_GROUP.sub("", text)
    text = _DANGLING_LABEL.sub("", text)
    text = re.sub(rf"(?<=[^\s{_CLOSE}(\[])[ \t]*{_OPEN}", f" {_OPEN}", text)
    text = re.sub(rf"{_CLOSE}[ \t]+{_OPEN}", f"{_CLOSE}{_OPEN}", text)
    text = re.sub(r"(?<=\S)[ \t]+(?=[,.;:!?])", "", text)
    text = re.sub(r"(?<=\S)[ \t]{2,}", " ", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    # Deleting an identifier can leave "A and and B" or "shown in and." behind.
    text = re.sub(r"\b(and|or)(?:\s+\1\b)+", r"\1", text, flags=re.IGNORECASE)
    text = re.sub(r"[ \t,]+(?:and|or)(?=[.;:!?])", "", text, flags=re.IGNORECASE)
    return re.sub(r"[ \t]+$", "", text, flags=re.MULTILINE)


def split_sentences(line: str) -> list[str]:
    """Split one line of prose into sentences; markers after a full stop stay with their sentence."""
    pieces: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(line):
        before = line[start : boundary.start()]
        last_word = before.rsplit(None, 1)[-1].lower() if before.strip() else ""
        if last_word in _ABBREVIATIONS or re.fullmatch(r"[a-z]\.", last_word):
            continue
        pieces.append(before)
        start = boundary.end()
    pieces.append(line[start:])
    sentences: list[str] = []
    for piece in pieces:
        lead = re.match(rf"^((?:{_OPEN}\d+{_CLOSE}\s*)+)", piece)
        if lead and sentences:
            sentences[-1] = sentences[-1] + " " + lead.group(1).strip()
            piece = piece[lead.end() :]
        if piece.strip():
            sentences.append(piece.strip())
    return sentences


def _is_countable(sentence: str) -> bool:
    return len(_WORD.findall(_PLACEHOLDER.sub("", sentence))) >= 2


def _insert_marker(sentence: str, marker: str) -> str:
    if re.search(rf"{_CLOSE}\s*$", sentence):
        return sentence.rstrip() + marker
    match = re.search(r"([.!?:;]+)\s*$", sentence)
    if match:
        head = sentence[: match.start()].rstrip()
        return head + ("" if head.endswith(_CLOSE) else " ") + marker + match.group(1)
    return sentence.rstrip() + " " + marker


@dataclass
class _Body:
    lines: list[str | list[str]] = field(default_factory=list)

    def sentences(self) -> Iterator[str]:
        for line in self.lines:
            if isinstance(line, list):
                yield from line[1:]

    def render(self) -> str:
        out = []
        for line in self.lines:
            if isinstance(line, list):
                out.append(line[0] + " ".join(line[1:]))
            else:
                out.append(line)
        return "\n".join(out).strip("\n")


def _parse_body(text: str) -> _Body:
    body = _Body()
    in_code = False
    for raw in text.split("\n"):
        if raw.strip().startswith("```"):
            in_code = not in_code
            body.lines.append(raw)
            continue
        if in_code or not raw.strip() or _HEADING.match(raw) or raw.lstrip().startswith("|"):
            body.lines.append(raw)
            continue
        prefix_match = _LIST_PREFIX.match(raw)
        prefix = prefix_match.group(1) if prefix_match else ""
        body.lines.append([prefix, *split_sentences(raw[len(prefix) :])])
    return body


def _split_reference_section(text: str) -> tuple[str, str]:
    """Split off a trailing references list the model wrote itself (we render our own panel)."""
    matches = list(_REFERENCE_HEADING.finditer(text))
    if not matches:
        return text, ""
    last = matches[-1]
    return text[: last.start()].rstrip(), text[last.end() :]


# --- Confidence ------------------------------------------------------------------------------------


def compute_confidence(*, citations: int, density: float) -> str:
    """Return RED with no valid citation, YELLOW with one or density < 0.3, else GREEN.

    `citations` counts distinct cited documents; density is cited sentences / sentences.
    """
    if citations <= 0:
        return RED
    if citations < GREEN_MIN_CITATIONS or density < GREEN_MIN_DENSITY:
        return YELLOW
    return GREEN


# --- Verification ----------------------------------------------------------------------------------


@dataclass
class VerifiedAnswer:
    """An answer whose every identifier is verified, with numbered markers and its references."""

    text: str
    citations: list[dict[str, Any]]
    references: list[dict[str, Any]]
    confidence: str
    density: float
    sentences: int
    cited_sentences: int
    removed: list[dict[str, str]]
    flags: list[dict[str, Any]]
    was_repaired: bool
    abstained: bool
    named_studies_attached: int = 0

    @property
    def cited_doc_ids(self) -> list[str]:
        return [citation["doc_id"] for citation in self.citations]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _source_line(source: EvidenceSource) -> str:
    details = ", ".join(str(part) for part in (source.journal, source.year) if part)
    title = source.title or source.study_name or source.doc_id
    return f"{title}" + (f" ({details})" if details else "")


def verify_answer(
    *,
    text: str,
    evidence: EvidenceSet,
    intent: str = "general",
    repair_max_sources: int = 5,
    abstention: str = DEFAULT_ABSTENTION,
) -> VerifiedAnswer:
    """Verify every identifier in `text` against `evidence`, attach named studies, repair or abstain.

    Unverifiable identifiers are deleted and logged (`citation_hallucinated`). With no valid
    citation left, the top approved sources (at most `repair_max_sources`, one per document) are
    attached under a "Sources" heading (`citation_repair`); with none approved, the answer becomes
    `abstention`. Logs `citation_extraction_complete` with the counts.
    """
    text = (text or "").replace("\r\n", "\n").replace(_OPEN, "").replace(_CLOSE, "").strip()
    placeholders = _Placeholders()
    removed: list[dict[str, str]] = []
    prose, listed = _split_reference_section(text)
    prose = _rewrite(prose, evidence, placeholders, removed)
    listed_docs = placeholders.docs_in(_rewrite(listed, evidence, placeholders, removed)) if listed else []
    for item in removed:
        logger.warning("citation_hallucinated", intent=intent, form=item["form"], identifier=item["value"])

    body = _parse_body(prose)
    attached, flags = _attach_named_studies(body, evidence, placeholders, intent)
    body_text = body.render()
    body_docs = placeholders.docs_in(body_text)
    sentences = [sentence for sentence in body.sentences() if _is_countable(sentence)]
    cited_sentences = sum(1 for sentence in sentences if _PLACEHOLDER.search(sentence))
    density = round(cited_sentences / len(sentences), 3) if sentences else 0.0

    was_repaired = abstained = False
    sources_docs = [doc for doc in listed_docs if doc not in body_docs]
    if not body_docs and not listed_docs:
        approved = evidence.approved()[:repair_max_sources]
        if approved:
            was_repaired = True
            sources_docs = [source.doc_id for source in approved]
            for source in approved:
                placeholders.token(source, "repair")
            logger.info(
                "citation_repair",
                intent=intent,
                reason="no_valid_citation",
                sources_attached=len(approved),
                doc_ids=sources_docs,
            )
        else:
            abstained = True

    if abstained:
        result = VerifiedAnswer(
            text=abstention,
            citations=[],
            references=[],
            confidence=RED,
            density=0.0,
            sentences=len(sentences),
            cited_sentences=0,
            removed=removed,
            flags=flags,
            was_repaired=False,
            abstained=True,
            named_studies_attached=attached,
        )
        _log_complete(result, intent=intent, mentions=len(placeholders.sources) + len(removed))
        return result

    numbering: dict[str, int] = {}
    for doc_id in [*body_docs, *sources_docs]:
        numbering.setdefault(doc_id, len(numbering) + 1)

    def render(fragment: str) -> str:
        rendered = _PLACEHOLDER.sub(lambda m: f"[{numbering[placeholders.sources[int(m.group(1))].doc_id]}]", fragment)
        return re.sub(r"(\[\d+\])(?:\1)+", r"\1", rendered)

    final = render(body_text)
    if sources_docs:
        lines = [SOURCES_HEADING]
        for doc_id in sources_docs:
            source = evidence.describe(doc_id)
            assert source is not None
            lines.append(f"- [{numbering[doc_id]}] {_source_line(source)}")
        final = (final + "\n\n" if final else "") + "\n".join(lines)

    citations = _citation_entries(body, placeholders, numbering, sources_docs, evidence)
    references = []
    for doc_id, number in sorted(numbering.items(), key=lambda item: item[1]):
        source = evidence.describe(doc_id)
        assert source is not None
        reference = format_reference(source, origins=evidence.origins(doc_id))
        if not reference["url"]:
            # No direct link can be validated for it: a reference the reader cannot follow is not shown.
            logger.warning("reference_dropped", doc_id=doc_id, reason="no valid direct URL")
            continue
        reference["n"] = number
        reference["doc_id"] = doc_id
        references.append(reference)
    result = VerifiedAnswer(
        text=final,
        citations=citations,
        references=references,
        confidence=compute_confidence(citations=len(numbering), density=density),
        density=density,
        sentences=len(sentences),
        cited_sentences=cited_sentences,
        removed=removed,
        flags=flags,
        was_repaired=was_repaired,
        abstained=False,
        named_studies_attached=attached,
    )
    _log_complete(result, intent=intent, mentions=len(placeholders.sources) + len(removed))
    return result


def _attach_named_studies(
    body: _Body, evidence: EvidenceSet, placeholders: _Placeholders, intent: str
) -> tuple[int, list[dict[str, Any]]]:
    """Give each library study named in a sentence without its identifier that identifier, or flag it."""
    patterns = evidence.name_patterns()
    attached = 0
    flags: list[dict[str, Any]] = []
    turn_docs = {source.doc_id for source in evidence.sources}
    for line in body.lines:
        if not isinstance(line, list):
            continue
        for index in range(1, len(line)):
            sentence = line[index]
            plain = _PLACEHOLDER.sub("", sentence)
            cited = set(placeholders.docs_in(sentence))
            found: dict[tuple[int, int], set[str]] = {}
            for pattern, doc_id in patterns:
                for match in pattern.finditer(plain):
                    found.setdefault(match.span(), set()).add(doc_id)
            spans = sorted(found, key=lambda span: (span[0], -(span[1] - span[0])))
            kept: list[tuple[int, int]] = []
            for span in spans:
                if not any(span[0] < other[1] and other[0] < span[1] for other in kept):
                    kept.append(span)
            for span in kept:
                candidates = found[span]
                name = plain[span[0] : span[1]]
                if candidates & cited:
                    continue
                choice = candidates if len(candidates) == 1 else candidates & turn_docs
                if len(choice) == 1:
                    source = evidence.primary(next(iter(choice)))
                    assert source is not None
                    sentence = _insert_marker(sentence, placeholders.token(source, "named_study"))
                    cited.add(source.doc_id)
                    attached += 1
                else:
                    flags.append({"type": "named_study_ambiguous", "name": name, "candidates": sorted(candidates)})
                    logger.warning("named_study_unverified", intent=intent, name=name, candidates=sorted(candidates))
            line[index] = sentence
    return attached, flags


def _citation_entries(
    body: _Body,
    placeholders: _Placeholders,
    numbering: dict[str, int],
    sources_docs: Sequence[str],
    evidence: EvidenceSet,
) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    seen: set[tuple[int, str]] = set()

    def add(source: EvidenceSource, form: str, sentence: str, section: str) -> None:
        number = numbering[source.doc_id]
        if (number, source.chunk_id) in seen:
            return
        seen.add((number, source.chunk_id))
        entry: dict[str, Any] = {"n": number, "doc_id": source.doc_id, "chunk_id": source.chunk_id}
        for kind in ("pmid", "doi", "nct"):
            if getattr(source, kind):
                entry[kind] = getattr(source, kind)
        entry.update({"origin": source.origin, "form": form, "section": section})
        if sentence:
            entry["sentence"] = sentence
        entries.append(entry)

    for line in body.lines:
        # Markers normally sit in sentences; one left on a heading or table row still gets its entry.
        for sentence in line[1:] if isinstance(line, list) else [line]:
            plain = _PLACEHOLDER.sub("", sentence).strip()
            for index in _PLACEHOLDER.findall(sentence):
                add(placeholders.sources[int(index)], placeholders.forms[int(index)], plain, "body")
    for doc_id in sources_docs:
        source = evidence.primary(doc_id)
        assert source is not None
        form = (
            "repair"
            if any(
                s.doc_id == doc_id and f == "repair"
                for s, f in zip(placeholders.sources, placeholders.forms, strict=True)
            )
            else "listed"
        )
        add(source, form, "", "sources")
    entries.sort(key=lambda entry: entry["n"])
    return entries


def _log_complete(result: VerifiedAnswer, *, intent: str, mentions: int) -> None:
    logger.info(
        "citation_extraction_complete",
        intent=intent,
        mentions_found=mentions,
        valid_citations=len({citation["doc_id"] for citation in result.citations}),
        hallucinated=len(result.removed),
        named_studies_attached=result.named_studies_attached,
        named_studies_flagged=len(result.flags),
        sentences=result.sentences,
        cited_sentences=result.cited_sentences,
        density=result.density,
        was_repaired=result.was_repaired,
        abstained=result.abstained,
        confidence=result.confidence,
    )


# --- Streaming -------------------------------------------------------------------------------------


class StreamScrubber:
    """Make streamed model text safe to show before verification finishes.

    Text is released a sentence at a time; identifiers that do not resolve against `evidence`
    are deleted and resolved ones shown as provisional numbers, so an unverified identifier never
    reaches the reader, even for a moment. The final, verified answer replaces the preview.
    """

    _RELEASE = re.compile(r"(?:[.!?]\s+|\n\n)")

    def __init__(self, evidence: EvidenceSet) -> None:
        self.evidence = evidence
        self.buffer = ""
        self.numbering: dict[str, int] = {}

    def _scrub(self, segment: str) -> str:
        placeholders = _Placeholders()
        rewritten = _rewrite(segment, self.evidence, placeholders, [])

        def number(match: re.Match[str]) -> str:
            doc_id = placeholders.sources[int(match.group(1))].doc_id
            return f"[{self.numbering.setdefault(doc_id, len(self.numbering) + 1)}]"

        rewritten = _PLACEHOLDER.sub(number, rewritten)
        trailing = segment[len(segment.rstrip()) :]
        return rewritten.rstrip() + trailing

    def feed(self, delta: str) -> str:
        """Add streamed text; return the part that is complete and safe to show now."""
        self.buffer += delta.replace(_OPEN, "").replace(_CLOSE, "")
        ends = [match.end() for match in self._RELEASE.finditer(self.buffer)]
        if not ends:
            return ""
        ready, self.buffer = self.buffer[: ends[-1]], self.buffer[ends[-1] :]
        return self._scrub(ready)

    def flush(self) -> str:
        """Return whatever is left, scrubbed."""
        ready, self.buffer = self.buffer, ""
        return self._scrub(ready) if ready else ""


def identifiers_in(text: str) -> list[tuple[str, str]]:
    """Return (kind, value) for every PMID, DOI, NCT and PMC id written in `text`.

    Numbered markers are not identifiers; evaluation uses this to count what a reader sees.
    """
    found = []
    for mention in extract_mentions(text, EvidenceSet()):
        if mention.form in {"pmid", "doi", "nct", "pmcid"}:
            found.append((mention.form, mention.value))
        elif mention.form == "citation":
            found.append(("citation", mention.value))
    return found
