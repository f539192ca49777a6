"""Find citation markers and identifiers in answer text, and rewrite them as resolved placeholders.

Every form a reader could take for a reference - `[citation:docId:chunkId]`, PMIDs, DOIs, NCT and
PMC ids, PubMed / DOI / ClinicalTrials.gov links, numbered markers - is found and resolved
against the turn's `EvidenceSet`; what does not resolve is deleted and recorded.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from evidence.characters import INVISIBLE, strip_invisible
from evidence.identifiers import is_doi, is_nct, is_pmid, url_key
from evidence.sources import EvidenceSet, EvidenceSource

# Placeholders stand for a resolved citation while the text is rewritten; the brackets are
# characters no model output keeps (they are stripped from the input first).
OPEN, CLOSE = "\u27e6", "\u27e7"
PLACEHOLDER = re.compile(rf"{OPEN}(\d+){CLOSE}")
# A PMID written with spaces inside ("9999 9999") is still one PMID to a reader.
_PMID_NUMBER = r"\d{1,9}(?:[ ]\d{1,8})*"

# Hyphen look-alikes a model may put inside "NCT-0123-4567"; matching folds them all to "-".
_DASHES = {dash: "-" for dash in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"}
_URL_CHARS = r"[^\s<>()\[\]\"'`]"
_TOKEN = re.compile(
    rf"""
    (?P<citation>\[\s*citation\s*:\s*[^\[\]\n]{{1,300}}?\s*\])
  | (?:https?://)?(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(?P<pubmed_url>\d{{1,9}})/?(?![\w?#&=])
  | (?:https?://)?(?:www\.)?europepmc\.org/(?:abstract|article|api/fulltextRepo\?pprId=)?/?MED/(?P<europepmc_url>\d{{1,9}})/?(?![\w?#&=])
  | (?:https?://)?(?:www\.)?(?:pmc\.ncbi\.nlm\.nih\.gov/articles|ncbi\.nlm\.nih\.gov/pmc/articles)/(?P<pmc_url>PMC\d{{1,9}})/?(?![\w?#&=])
  | (?:https?://)?(?:www\.)?clinicaltrials\.gov/(?:ct2/show|study)/(?P<ctgov_url>NCT\d{{8}})/?(?![\w?#&=])
  | (?:https?://)?(?:dx\.)?doi\.org/(?P<doi_url>10\.\d{{4,9}}(?:\.\d+)*/[^\s<>"\[\]]+)
  | (?P<url>(?:https?://|www\.){_URL_CHARS}+|\b(?:[a-z0-9-]+\.)+[a-z]{{2,24}}/{_URL_CHARS}*)
  | \b(?:PMIDs?|PubMed\s+IDs?|PubMed\s+identifiers?)\s*
        (?:(?:is|was|are|were|number|numbers|no\.?|of|reads?)\s+)*(?:\#|:|=|no\.?)?\s*
        (?P<pmid>{_PMID_NUMBER}(?:\s*(?:,|;|and|&)\s*(?:PMID\s*:?\s*)?{_PMID_NUMBER})*)\b
  | \bPubMed\s*(?:[:\#]\s*(?P<pubmed_colon>\d{{1,9}})|(?P<pubmed_bare>\d(?:[ ]?\d){{4,8}}))\b
  | [\(\[](?P<bare_pmid>\d{{7,9}})[\)\]]
  | \b(?P<pmcid>PMC[ -]?\d{{1,9}})\b
  | \b(?P<nct>NCT[ _-]?\d{{4}}[ -]?\d{{4}})\b
  | \bdoi\s*[:\#]?\s*(?P<doi_spaced>10\.\d{{4,9}}(?:\.\d+)*\s*/\s*[^\s<>"\[\]]+)
  | (?P<doi>\b10\.\d{{4,9}}(?:\.\d+)*/[^\s<>"\[\]]+)
  | (?P<registry>\b(?:ISRCTN|ACTRN|ChiCTR|DRKS|UMIN|jRCT|PACTR|IRCT|CTRI|EudraCT|EUCTR|KCT|TCTR|SLCTR|RBR|NTR)
        (?:\s*(?:number|no\.?|id)?\s*[:\#]?\s*)[-/]?[A-Z0-9]*\d[A-Z0-9/-]*)
  | \[(?P<numeric>\d{{1,3}}(?:\s*(?:,|;|\u2013|-|&|and)\s*\d{{1,3}})*)\]
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


# "mg.kg/day" looks like a host and a path; a last label that is a unit is not a web address.
_UNIT_LABELS = frozenset({"kg", "mg", "ml", "dl", "min", "day", "wk", "hr", "mmol", "umol", "mcg", "ug", "iu"})


def _folded(text: str) -> tuple[str, list[int]]:
    """Return `text` with each character NFKC-folded (full-width digits, ligatures, ...), and for
    every folded character the index of the character of `text` it came from.

    Folding character by character keeps offsets into the original, so only the identifiers found
    are rewritten and the rest of the answer keeps its own characters ("m²" stays "m²").
    """
    if text.isascii():  # nothing to fold: every character above is outside ASCII
        return text, list(range(len(text)))
    folded: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if INVISIBLE.match(char):
            continue
        piece = unicodedata.normalize("NFKC", char) if ord(char) > 127 else char
        for part in piece:
            folded.append(_DASHES.get(part, part))
            origin.append(index)
    return "".join(folded), origin




def _pmid_values(raw: str) -> tuple[list[str], int]:
    """Split the digits after a PMID label into PMIDs; return them and how much of `raw` they use.

    Digit groups separated by single spaces join into one PMID while they fit in nine digits
    ("9999 9999" is one PMID to a reader); a later group of fewer than six digits ends the list
    (a year after the PMID is not another PMID).
    """
    values: list[str] = []
    used = 0
    current = ""
    previous_end = -1
    for group in re.finditer(r"\d+", raw):
        digits = group.group()
        joined_by_space = previous_end >= 0 and raw[previous_end : group.start()] == " "
        if joined_by_space and len(current) + len(digits) <= 9:
            current += digits
        elif current and len(digits) < 6 and joined_by_space:
            break
        else:
            if current:
                values.append(current)
            current = digits
        previous_end = used = group.end()
    if current:
        values.append(current)
    return values, used


def extract_mentions(text: str, evidence: EvidenceSet) -> list[Mention]:
    """Return every citation marker, identifier and link in `text`, each resolved or not (source None).

    Matching runs over the NFKC-folded text with dashes unified, so full-width digits and
    look-alike hyphens cannot disguise an identifier; offsets refer to `text` itself.
    """
    folded, origin = _folded(text)
    mentions: list[Mention] = []

    def span(start: int, end: int) -> tuple[int, int]:
        return origin[start], origin[end - 1] + 1

    for match in _TOKEN.finditer(folded):
        form = match.lastgroup or ""
        start, end = span(*match.span())
        raw = match.group(form)
        if form == "citation":
            inner = raw.strip()[1:-1].split(":", 1)[1]
            for part in re.split(r"[,;]", inner):
                if part.strip():
                    mentions.append(
                        Mention(start, end, "citation", part.strip(), _resolve_citation_part(part, evidence))
                    )
            continue
        if form in {"doi", "doi_url", "doi_spaced"}:
            value = _trim_doi(raw)
            end = span(match.start(), match.start(form) + len(value))[1]
            value = re.sub(r"\s+", "", value)
            mentions.append(Mention(start, end, "doi", value, evidence.resolve_identifier("doi", value)))
            continue
        if form == "pmid":
            values, used = _pmid_values(raw)
            end = span(match.start(), match.start(form) + used)[1]
            for value in values:
                mentions.append(Mention(start, end, "pmid", value, evidence.resolve_identifier("pmid", value)))
            continue
        if form in {"pubmed_url", "europepmc_url", "bare_pmid", "pubmed_colon", "pubmed_bare"}:
            value = raw.replace(" ", "")
            mentions.append(Mention(start, end, "pmid", value, evidence.resolve_identifier("pmid", value)))
            continue
        if form in {"pmcid", "pmc_url"}:
            value = re.sub(r"[\s-]", "", raw.upper())
            mentions.append(Mention(start, end, "pmcid", value, evidence.resolve_identifier("pmcid", value)))
            continue
        if form in {"nct", "ctgov_url"}:
            value = re.sub(r"[\s_-]", "", raw.upper())
            mentions.append(Mention(start, end, "nct", value, evidence.resolve_identifier("nct", value)))
            continue
        if form == "url":
            value = raw.rstrip(".,;:!?'\"")
            if not re.match(r"(?:https?://|www\.)", value, re.IGNORECASE):
                host = value.partition("/")[0]
                if host.rsplit(".", 1)[-1].lower() in _UNIT_LABELS:
                    continue
            end = span(match.start(), match.start() + len(value))[1]
            mentions.append(Mention(start, end, "url", value, evidence.resolve_identifier("url", url_key(value))))
            continue
        if form == "registry":
            mentions.append(Mention(start, end, "registry", raw.strip(), None))
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


_MARKDOWN_LINK = re.compile(
    r"!?\[(?P<text>[^\[\]\n]{0,300})\]\(\s*<?(?P<url>[^()\s<>]+)>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)"
)
_REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]\n]{1,100}\]:\s*<?(?P<url>\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_AUTOLINK = re.compile(r"<(?P<url>(?:https?|ftp)://[^\s<>]+)>", re.IGNORECASE)
_HTML_LINK = re.compile(
    r"<a\b[^>]*?\bhref\s*=\s*[\"']?(?P<url>[^\"'\s>]+)[\"']?[^>]*>(?P<text>.*?)</a\s*>", re.IGNORECASE | re.DOTALL
)


def unlink(text: str) -> str:
    """Turn every link markup into plain "text (address)" so the address is checked like any mention."""

    def plain(match: re.Match[str]) -> str:
        label = (match.groupdict().get("text") or "").strip()
        if re.fullmatch(r"\d{1,3}(?:\s*[,;\u2013-]\s*\d{1,3})*", label):
            label = f"[{label}]"
        return f"{label} ({match.group('url')})" if label else f"({match.group('url')})"

    text = _REFERENCE_LINK.sub(lambda m: f"({m.group('url')})", text)
    text = _HTML_LINK.sub(plain, text)
    text = _MARKDOWN_LINK.sub(plain, text)
    return _AUTOLINK.sub(lambda m: f"({m.group('url')})", text)


def rewrite(text: str, evidence: EvidenceSet, placeholders: Placeholders, removed: list[dict[str, str]]) -> str:
    """Replace resolved mentions by placeholders and delete unresolved ones, recording what was removed.

    Links are never kept as written: a Markdown or HTML link becomes its text followed by its
    address, and the address is then treated like any other mention (a verified identifier
    becomes our own marker; anything else, whatever its host, is deleted).
    """
    text = unlink(strip_invisible(text))
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


# What a reader takes for an identifier because of its label, whether or not the rest is well formed:
# "PMID 0123", "PMID 1234567890", "NCT0123456", "doi: 10.105/x". Used only to name malformed ones.
_LABELLED = re.compile(
    r"\bPMIDs?\s*[:#=]?\s*\d[\d-]*|\bNCT[ _-]?\d(?:[\d -]*\d)?|\bdoi\s*[:#]\s*[^\s<>\"\[\]]+",
    re.IGNORECASE,
)
_WELL_FORMED = {"pmid": is_pmid, "doi": is_doi, "nct": is_nct}


def malformed_identifiers(text: str) -> list[str]:
    """Return, as written, each PMID, DOI or NCT number in `text` that is labelled as one but is not well formed.

    `extract_mentions` finds well-formed identifiers only; a reader still sees "NCT0123456" (seven
    digits) or "PMID 0123" as a citation, and a checker must say it cannot be one rather than skip it.
    """
    text = strip_invisible(text)
    good: list[tuple[int, int]] = []
    found: list[str] = []
    for mention in extract_mentions(text, EvidenceSet()):
        check = _WELL_FORMED.get(mention.form)
        # A citation marker or a link is read as a whole: "pmid:123" inside one is not a loose label.
        if check is None or check(mention.value):
            good.append((mention.start, mention.end))
        else:  # one span may hold a list ("PMID 0123; PMID 22663011"): name the bad value only
            found.append(f"PMID {mention.value}" if mention.form == "pmid" else mention.value)
    for match in _LABELLED.finditer(text):
        if not any(start < match.end() and match.start() < end for start, end in good):
            found.append(match.group(0).rstrip(".,;:)").strip())
    return list(dict.fromkeys(found))
