"""Find citation markers and identifiers in answer text, and rewrite them as resolved placeholders.

Every form a reader could take for a reference - `[citation:docId:chunkId]`, PMIDs, DOIs, NCT and
PMC ids, PubMed / DOI / ClinicalTrials.gov links, numbered markers - is found and resolved
against the turn's `EvidenceSet`; what does not resolve is deleted and recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence.sources import EvidenceSet, EvidenceSource

# Placeholders stand for a resolved citation while the text is rewritten; the brackets are
# characters no model output keeps (they are stripped from the input first).
OPEN, CLOSE = "\u27e6", "\u27e7"
PLACEHOLDER = re.compile(rf"{OPEN}(\d+){CLOSE}")

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
        if len(bounds) == 2 and bounds[0].isdecimal() and bounds[1].isdecimal():
            low, high = int(bounds[0]), int(bounds[1])
            if 0 < high - low < 20:
                numbers.extend(range(low, high + 1))
                continue
        numbers.extend(int(bound) for bound in bounds if bound.isdecimal())
    return numbers


def _resolve_citation_part(part: str, evidence: EvidenceSet) -> EvidenceSource | None:
    part = part.strip()
    if part.isdecimal():
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


class Placeholders:
    """The sources cited in a text being rewritten; placeholder n stands for `sources[n]`."""

    def __init__(self) -> None:
        self.sources: list[EvidenceSource] = []
        self.forms: list[str] = []

    def token(self, source: EvidenceSource, form: str) -> str:
        self.sources.append(source)
        self.forms.append(form)
        return f"{OPEN}{len(self.sources) - 1}{CLOSE}"

    def docs_in(self, text: str) -> list[str]:
        return list(dict.fromkeys(self.sources[int(n)].doc_id for n in PLACEHOLDER.findall(text)))


def rewrite(text: str, evidence: EvidenceSet, placeholders: Placeholders, removed: list[dict[str, str]]) -> str:
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


_MARKER_GROUP = re.compile(rf"[\(\[]\s*((?:{OPEN}\d+{CLOSE}[\s,;]*(?:and\s+|&\s*)?)+)\s*[\)\]]")
_EMPTY_GROUP = re.compile(
    r"[\(\[]\s*(?:(?:PMIDs?|DOI|NCT|PMC|PubMed|see|refs?\.?|references?|e\.g\.|and|&)\b|[\s:,;.#=-])*[\)\]]",
    re.IGNORECASE,
)
_DANGLING_LABEL = re.compile(r"\b(?:PMIDs?|DOI|PubMed ID)\s*[:#=]?\s*(?=[,.;)\]]|$)", re.IGNORECASE | re.MULTILINE)


def _tidy(text: str) -> str:
    text = _MARKER_GROUP.sub(lambda m: " " + "".join(re.findall(rf"{OPEN}\d+{CLOSE}", m.group(1))), text)
    text = _EMPTY_GROUP.sub("", text)
    text = _DANGLING_LABEL.sub("", text)
    text = re.sub(rf"(?<=[^\s{CLOSE}(\[])[ \t]*{OPEN}", f" {OPEN}", text)
    text = re.sub(rf"{CLOSE}[ \t]+{OPEN}", f"{CLOSE}{OPEN}", text)
    text = re.sub(r"(?<=\S)[ \t]+(?=[,.;:!?])", "", text)
    text = re.sub(r"(?<=\S)[ \t]{2,}", " ", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    # Deleting an identifier can leave "A and and B" or "shown in and." behind.
    text = re.sub(r"\b(and|or)(?:\s+\1\b)+", r"\1", text, flags=re.IGNORECASE)
    text = re.sub(r"[ \t,]+(?:and|or)(?=[.;:!?])", "", text, flags=re.IGNORECASE)
    return re.sub(r"[ \t]+$", "", text, flags=re.MULTILINE)


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
