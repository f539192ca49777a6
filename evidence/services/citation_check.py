"""Check any text that cites PMIDs, DOIs, NCT numbers or PMC ids: each sentence against what it cites.

A pasted text (a chatbot's answer, a draft paragraph, a guideline excerpt) is split into sentences
with `evidence.claims.split_claims`; each sentence's identifiers are found with the citation parser
(`evidence.citations.parse`), resolved to stored text, and the sentence without its identifiers is
judged against that text. A sentence that cites nothing is reported as `no_citation` and not judged:
attaching it to its paragraph's identifiers would judge it against sources its author may never have
meant, and a wrong "not supported" is worse than an honest "no citation".

Identifiers are resolved to stored text by `evidence.services.cited_sources` (the library, and the
stores other apps register).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from config.inputs import check_no_nul
from evidence import identifiers
from evidence.characters import strip_invisible
from evidence.citations.parse import Mention, extract_mentions, malformed_identifiers
from evidence.claims import (
    ClaimVerdict,
    PassageCache,
    PassageText,
    judge_claim,
    remove_dangling,
    split_claims,
    verbatim_quote,
)
from evidence.claims.splitting import plain_text
from evidence.claims.verdicts import CONTRADICTED, NOT_ENOUGH_INFO, SUPPORTED
from evidence.embedding import embedder
from evidence.services.cited_sources import (
    KINDS,
    Resolution,
    cited_sources_resolve,
    identifier_key,
    identifier_label,
    identifier_url,
)
from evidence.sources import EvidenceSet

CHECK_MAX_CHARS = 20_000
CHECK_MAX_IDENTIFIERS = 100

STATUS_SUPPORTED = "supported"
STATUS_CONTRADICTED = "contradicted"
STATUS_NOT_SUPPORTED = "not_supported"
STATUS_IDENTIFIER_NOT_FOUND = "identifier_not_found"
STATUS_SOURCE_UNAVAILABLE = "source_unavailable"
STATUS_NO_CITATION = "no_citation"
STATUSES = (
    STATUS_SUPPORTED,
    STATUS_CONTRADICTED,
    STATUS_NOT_SUPPORTED,
    STATUS_IDENTIFIER_NOT_FOUND,
    STATUS_SOURCE_UNAVAILABLE,
    STATUS_NO_CITATION,
)
STATUS_LABELS = {
    STATUS_SUPPORTED: "Supported",
    STATUS_CONTRADICTED: "Contradicted",
    STATUS_NOT_SUPPORTED: "Not supported",
    STATUS_IDENTIFIER_NOT_FOUND: "Identifier not found",
    STATUS_SOURCE_UNAVAILABLE: "Source unavailable",
    STATUS_NO_CITATION: "No citation",
}
_STATUS_OF_VERDICT = {
    SUPPORTED: STATUS_SUPPORTED,
    CONTRADICTED: STATUS_CONTRADICTED,
    NOT_ENOUGH_INFO: STATUS_NOT_SUPPORTED,
}
_WHERE = {
    "pmid": "in PubMed or the library",
    "doi": "among the stored PubMed abstracts or the library",
    "nct": "among the stored ClinicalTrials.gov records or the library",
    "pmcid": "among the stored PubMed abstracts or the library",
}


class CitationCheckInputError(ValueError):
    """The text cannot be checked; `code` and `status` are what the API answers, `message` says what to change."""

    def __init__(self, message: str, *, code: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.code, self.status = message, code, status


@dataclass(frozen=True)
class CitedIdentifier:
    """One identifier a sentence cites, with its link and whether its text could be found."""

    kind: str
    value: str  # as written (a DOI keeps its case)
    key: str  # the comparison key (see `identifier_key`)
    found: bool
    available: bool = True
    title: str = ""
    retracted: bool = False

    @property
    def label(self) -> str:
        return identifier_label(self.kind, self.value)

    @property
    def url(self) -> str:
        return identifier_url(self.kind, self.value)

    @property
    def doc_id(self) -> str:
        return f"{self.kind}:{self.key}"


@dataclass(frozen=True)
class SourceQuote:
    """A sentence of a cited source that bears on the checked sentence (supports or contradicts it)."""

    identifier: str  # the identifier's label, e.g. "PMID 22663011"
    text: str


@dataclass(frozen=True)
class SentenceCheck:
    """One sentence of the checked text and what its citations say about it."""

    text: str
    identifiers: list[CitedIdentifier]
    status: str
    quotes: list[SourceQuote] = field(default_factory=list)
    reason: str = ""
    score: float | None = None

    @property
    def status_label(self) -> str:
        return STATUS_LABELS[self.status]


@dataclass(frozen=True)
class CitationCheck:
    """Every sentence of a checked text, in order, with a count per status."""

    sentences: list[SentenceCheck]

    @property
    def counts(self) -> dict[str, int]:
        return {status: sum(1 for s in self.sentences if s.status == status) for status in STATUSES}

    @property
    def summary(self) -> list[tuple[str, str, int]]:
        """Return (status, label, count) for each status some sentence has, in `STATUSES` order."""
        return [(status, STATUS_LABELS[status], count) for status, count in self.counts.items() if count]


# --- Identifiers in text ------------------------------------------------------------------------

_CITED_PART = re.compile(r"^(?P<kind>pmid|doi|nct|pmcid|pmc)\s*:\s*(?P<rest>.+)$", re.IGNORECASE)


def _cited_key(mention: Mention) -> tuple[str, str, str] | None:
    """Return (kind, key, as written) of a PMID, DOI, NCT or PMC mention, or of a `[citation:kind:id:chunk]`."""
    if mention.form in KINDS:
        written = identifiers.normalize_doi(mention.value) if mention.form == "doi" else mention.value
        return mention.form, identifier_key(mention.form, mention.value), written
    if mention.form != "citation":
        return None
    match = _CITED_PART.match(mention.value)
    if not match:
        return None
    kind = "pmcid" if match.group("kind").lower() in {"pmc", "pmcid"} else match.group("kind").lower()
    rest = match.group("rest").strip()
    # The chunk id follows the document id after the last colon; a DOI may hold colons of its own.
    candidates = [rest, rest.rsplit(":", 1)[0]]
    valid = {"pmid": identifiers.is_pmid, "doi": identifiers.is_doi, "nct": identifiers.is_nct,
             "pmcid": lambda value: bool(identifiers.PMCID_RE.fullmatch(value))}[kind]
    for candidate in candidates:
        key = identifier_key(kind, candidate)
        if valid(key):
            return kind, key, candidate.strip() if kind == "doi" else key
    return None


def _cited_in(text: str) -> tuple[dict[tuple[str, str], str], list[Mention]]:
    """Return the identifiers cited in `text` in order, (kind, key) → as first written, and every mention found."""
    mentions = extract_mentions(text, EvidenceSet())
    cited: dict[tuple[str, str], str] = {}
    for mention in mentions:
        found = _cited_key(mention)
        if found is not None:
            cited.setdefault((found[0], found[1]), found[2])
    return cited, mentions


def check_citation_text(text: str) -> str:
    """Return `text` ready to check, or raise CitationCheckInputError saying what to change."""
    if not isinstance(text, str):
        raise CitationCheckInputError("text must be a string of prose citing PMIDs, DOIs or NCT numbers.",
                                      code="invalid")
    if len(text) > CHECK_MAX_CHARS:
        raise CitationCheckInputError(
            f"The text is {len(text):,} characters long; check at most {CHECK_MAX_CHARS:,} characters at a time.",
            code="text_too_long",
            status=413,
        )
    try:
        check_no_nul(text, field="text")
    except ValidationError as exc:
        raise CitationCheckInputError(exc.messages[0], code="invalid") from exc
    text = strip_invisible(text)
    if not text.strip():
        raise CitationCheckInputError(
            "The text is empty: paste sentences that cite PMIDs, DOIs or NCT numbers.", code="empty_text"
        )
    malformed = malformed_identifiers(text)
    if malformed:
        raise CitationCheckInputError(
            f"Not well-formed identifier{'s' if len(malformed) > 1 else ''}: {', '.join(malformed)}. "
            "A PMID is digits without a leading zero (e.g. PMID 35657320), an NCT number is NCT and 8 digits "
            "(e.g. NCT03057951), a DOI looks like 10.1056/NEJMoa2200075.",
            code="malformed_identifier",
        )
    cited, _ = _cited_in(text)
    if not cited:
        raise CitationCheckInputError(
            "The text cites no PMID, DOI, NCT number or PMC id, so there is nothing to check; "
            "write them as e.g. PMID 35657320, doi:10.1056/NEJMoa2200075 or NCT03057951.",
            code="no_identifiers",
        )
    if len(cited) > CHECK_MAX_IDENTIFIERS:
        raise CitationCheckInputError(
            f"The text cites {len(cited)} different identifiers; check at most {CHECK_MAX_IDENTIFIERS} at a time.",
            code="too_many_identifiers",
        )
    return text


# --- Judging --------------------------------------------------------------------------------------


def claim_verdict(claim: str, passages: Sequence[PassageText], *, cache: PassageCache) -> ClaimVerdict:
    """Return the verdict on `claim` against `passages`: a word-for-word quote is supported outright."""
    quoted = verbatim_quote(claim, passages)
    if quoted is not None:
        return ClaimVerdict(True, [quoted], "the cited source says this word for word", verdict=SUPPORTED, score=1.0)
    return judge_claim(claim, passages, embed=embedder(), cache=cache)


def status_for_verdict(verdict: str) -> str:
    """Return the checker's status for a verifier verdict (not_enough_info reads as not_supported)."""
    return _STATUS_OF_VERDICT[verdict]


def _claim_text(text: str, mentions: Sequence[Mention]) -> str:
    """Return the sentence as a claim: identifiers, links and the brackets they leave cut out."""
    for mention in sorted(mentions, key=lambda m: m.start, reverse=True):
        text = text[: mention.start] + text[mention.end :]
    return plain_text(remove_dangling(text))


def _listed(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + f" and {labels[-1]}"


def _sentence_check(
    text: str, keys: dict[tuple[str, str], str], mentions: Sequence[Mention], resolution: Resolution,
    cache: PassageCache,
) -> SentenceCheck:
    cited = [
        CitedIdentifier(
            kind=kind,
            value=written,
            key=key,
            found=(kind, key) in resolution.found,
            available=(kind, key) not in resolution.unavailable,
            title=source.title if (source := resolution.found.get((kind, key))) else "",
            retracted=bool(source and source.retracted),
        )
        for (kind, key), written in keys.items()
    ]
    if not cited:
        return SentenceCheck(text, [], STATUS_NO_CITATION,
                             reason="This sentence cites no PMID, DOI or NCT number, so it was not checked.")
    missing = [c for c in cited if not c.found and c.available]
    unavailable = [c for c in cited if not c.available]
    found = [c for c in cited if c.found]
    notes = [f"{c.label} is not found {_WHERE[c.kind]}." for c in missing]
    if unavailable:
        notes.append(f"{_listed([c.label for c in unavailable])} could not be fetched from PubMed; try again later.")
    notes += [f"{c.label} is retracted." for c in found if c.retracted]
    if not found:
        status = STATUS_IDENTIFIER_NOT_FOUND if missing else STATUS_SOURCE_UNAVAILABLE
        return SentenceCheck(text, cited, status, reason=" ".join(notes))
    labels = {c.doc_id: c.label for c in cited}
    passages = [p for c in found for p in resolution.found[(c.kind, c.key)].passages]
    verdict = claim_verdict(_claim_text(text, mentions), passages, cache=cache)
    status = status_for_verdict(verdict.verdict)
    quotes = [SourceQuote(labels.get(q.doc_id, q.doc_id), q.quote) for q in verdict.support]
    reason = verdict.reason
    if missing:
        status = STATUS_IDENTIFIER_NOT_FOUND
        judged = {STATUS_SUPPORTED: "supports", STATUS_CONTRADICTED: "contradicts"}.get(
            status_for_verdict(verdict.verdict), "does not support"
        )
        reason = f"{_listed([c.label for c in found])} {judged} the sentence" + (f" ({reason})" if reason else "")
    elif unavailable and status != STATUS_SUPPORTED:
        status = STATUS_SOURCE_UNAVAILABLE
    return SentenceCheck(text, cited, status, quotes, " ".join([*notes, reason]).strip(), verdict.score)


def citations_check(*, text: str) -> CitationCheck:
    """Return every sentence of `text` with its cited identifiers, its status, quotes and reason.

    Validates first (`check_citation_text`). Identifiers written between sentences ("… stroke. PMID
    123.") belong to the sentence before them. Missing PubMed abstracts are fetched and stored.
    """
    text = check_citation_text(text)
    claims = split_claims(text)
    if not claims:
        raise CitationCheckInputError(
            "The text has identifiers but no sentence to check against them; paste the sentences that cite them.",
            code="no_sentences",
        )
    cited: list[tuple[dict[tuple[str, str], str], list[Mention]]] = []
    for index, claim in enumerate(claims):
        end = claims[index + 1].start if index + 1 < len(claims) else len(text)
        # The gap after a sentence holds what split_claims skipped: a bare "PMID 123." or "[PMID 123]".
        keys, mentions = _cited_in(claim.text)
        gap_keys, _ = _cited_in(text[claim.end : end])
        cited.append(({**keys, **{k: v for k, v in gap_keys.items() if k not in keys}}, mentions))
    resolution = cited_sources_resolve(keys=[key for keys, _ in cited for key in keys])
    cache = PassageCache()
    return CitationCheck(
        [
            _sentence_check(claim.text, keys, mentions, resolution, cache)
            for claim, (keys, mentions) in zip(claims, cited, strict=True)
        ]
    )
