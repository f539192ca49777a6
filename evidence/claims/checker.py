"""The claim checker: every statement shown must be supported by the source it cites.

An answer is split into claims (sentences and list items). A cited claim is judged against the stored
text of what it cites - its numbers, its direction and negation, the studies and drugs it names, and its
meaning as the claim verifier model reads it (`evidence.claims.judge`); a claim the source contradicts is
recorded as contradicted; an uncited claim is attached to an admitted source that supports it, or
removed. Study names that no source of this turn and no library entry carries are removed, never shown
bare. What remains is cleaned of dangling fragments; every removal is recorded with its reason.

Chat answers, the research trays and the streamed previews of both use this one checker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import structlog

from evidence.citations.parse import extract_mentions
from evidence.claims.judge import Candidate, Embed, PassageCache, decide, judge_claim, score_claim
from evidence.claims.llm_check import JsonCompleter, llm_verdicts
from evidence.claims.names import study_names
from evidence.claims.splitting import Claim, remove_dangling, split_claims
from evidence.claims.verbatim import verbatim_quote
from evidence.claims.verdicts import CONTRADICTED, NOT_ENOUGH_INFO, SUPPORTED, Quote
from evidence.sources import ORIGIN_LIBRARY, EvidenceSet, EvidenceSource

logger = structlog.get_logger("medcite.citations")

# Statements about the evidence itself, written by the composer: not claims about patients.
# Statements about the answer or the page, not about patients: the answer's own framing, and the
# research trays' page actions ("Accept it to run the search", "The column is added below").
META = re.compile(
    r"^\W*(?:bottom line\W*)?(?:the cited (?:evidence|sources?)|weigh |check that |these statements summari[sz]e|"
    r"i could not find|neither the curated|what the evidence does not cover|"
    r"accept |dismiss |(?:here (?:is|are)|try|run)\b[^.]*\b(?:search|query|suggestion|column)|"
    r"(?:this|the) (?:search|query|column|suggestion)s? (?:will |would )?"
    r"(?:narrow|restrict|limit|filter|keep|broaden|widen|add|run|look|is added|appears|is below)\w*)",
    re.IGNORECASE,
)
NAME_REMOVED = "named study without a verified identifier"
UNVERIFIED = "identifier not in this turn's evidence or the library"
_EMPTY_BRACKETS = re.compile(r"\s*[\(\[]\s*[,;:.]*\s*[\)\]]")
_BOTTOM_LINE = re.compile(r"^\W*(?:bottom line|nearest finding)\W*", re.IGNORECASE)
_HEADING_ONLY = re.compile(r"^(#{1,6} [^\n]*)\n+(?=#{1,6} |\Z)", re.MULTILINE)
_EMPTY_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s*$\n?", re.MULTILINE)


@dataclass
class ClaimRecord:
    """One statement of the answer and what verification decided about it."""

    text: str
    doc_ids: list[str]
    supported: bool
    support: list[dict[str, str]] = field(default_factory=list)
    reason: str = ""
    repaired: bool = False
    # "supported", "contradicted" (`support` then quotes the contradicting sentences) or "not_enough_info".
    verdict: str = ""

    def __post_init__(self) -> None:
        if not self.verdict:
            self.verdict = SUPPORTED if self.supported else NOT_ENOUGH_INFO

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class CheckedText:
    """A checked text: what remains of it, the verdict on each claim, and what was removed and why."""

    text: str
    records: list[ClaimRecord]
    # {"kind": "claim" | "study_name" | "identifier", "text", "reason", ...} in the order of the text.
    removals: list[dict[str, str]]

    @property
    def claims_removed(self) -> list[dict[str, str]]:
        """The removed statements and study names (the identifiers that went with them aside)."""
        return [removal for removal in self.removals if removal["kind"] != "identifier"]

    @property
    def identifiers_removed(self) -> list[dict[str, str]]:
        """The identifiers removed with their statements because no source of this turn carries them."""
        return [{"form": r["form"], "value": r["value"]} for r in self.removals if r["kind"] == "identifier"]


class SupportChecker:
    """Judge the claims of answers citing one turn's evidence (passage embeddings cached per turn)."""

    def __init__(
        self,
        evidence: EvidenceSet,
        *,
        embed: Embed,
        threshold: float | None,
        known_names: Sequence[str] = (),
        complete: JsonCompleter | None = None,
    ) -> None:
        self.evidence = evidence
        self.embed = embed
        self.threshold = threshold
        self.known_names = list(known_names)
        self.cache = PassageCache()
        # With a language model configured, its verdicts (one batched call per checked answer) decide.
        self.complete = complete
        self.model_verdicts: dict[tuple[str, tuple[str, ...]], tuple[str, Candidate | None]] = {}

    def passages(self, doc_ids: Sequence[str]) -> list[EvidenceSource]:
        """Return the citable text of each document: every chunk, a library study with its name and title."""
        found = []
        for doc_id in dict.fromkeys(doc_ids):
            for chunk in self.evidence.chunks(doc_id):
                if chunk.origin == ORIGIN_LIBRARY:
                    # As the composer labels a library finding: "NAME (journal, year): finding".
                    chunk = replace(chunk, text=f"{chunk.labelled_text()} {chunk.title}.")
                found.append(chunk)
        return found

    def _plain(self, claim: Claim) -> tuple[str, list[str]]:
        """Return the claim's text without identifiers and unverifiable names, and the documents it cites."""
        mentions = extract_mentions(claim.text, self.evidence)
        cited = [m.source.doc_id for m in mentions if m.source is not None]
        # Identifiers are checked by citation verification (their digits are not the claim's numbers);
        # a study name nobody can verify is dropped, so the claim has to stand on its citation.
        spans = [(m.start, m.end) for m in mentions] + [(a, b) for a, b, _ in self.unverified_names(claim.text)]
        bare = claim.text
        for start, end in sorted(set(spans), reverse=True):
            bare = bare[:start] + bare[end:]
        plain = _EMPTY_BRACKETS.sub("", _BOTTOM_LINE.sub("", replace(claim, text=bare).plain))
        return re.sub(r"\s+([.,;:!?])", r"\1", plain).strip(), cited

    def ask_model(self, text: str) -> None:
        """Have the configured language model judge the cited claims of `text` in one call (kept for `judge`)."""
        if self.complete is None:
            return
        keys, scored = [], []
        for claim in split_claims(text):
            if META.match(claim.plain) or claim.dangling:
                continue
            plain, cited = self._plain(claim)
            passages = self.passages(cited) if cited else []
            if not passages or verbatim_quote(plain, passages) is not None:
                continue
            keys.append((plain, tuple(cited)))
            scored.append(score_claim(plain, passages, embed=self.embed, model=None, cache=self.cache))
        for index, answer in llm_verdicts(scored, self.complete).items():
            self.model_verdicts[keys[index]] = (answer.verdict, answer.candidate)

    def judge(self, claim: Claim) -> ClaimRecord:
        """Return the verdict on one claim: supported by what it cites, repaired, or not supported."""
        plain, cited = self._plain(claim)
        if cited:
            verdict, quotes, reason = self._verdict(
                plain, self.passages(cited), self.model_verdicts.get((plain, tuple(cited)))
            )
            return ClaimRecord(plain, list(dict.fromkeys(cited)), verdict == SUPPORTED, quotes, reason, verdict=verdict)
        named = [doc_id for pattern, doc_id in self.evidence.name_patterns() if pattern.search(claim.text)]
        if named:  # citation verification gives a named library study its identifier
            verdict, quotes, reason = self._verdict(plain, self.passages(named))
            if verdict != NOT_ENOUGH_INFO:
                return ClaimRecord(
                    plain, list(dict.fromkeys(named)), verdict == SUPPORTED, quotes, reason, verdict=verdict
                )
        admitted = [source.doc_id for source in self.evidence.approved()]
        verdict, quotes, reason = (
            self._verdict(plain, self.passages(admitted)) if admitted else (NOT_ENOUGH_INFO, [], "")
        )
        if verdict == SUPPORTED:
            return ClaimRecord(plain, [quotes[0]["doc_id"]], True, quotes, repaired=True)
        if verdict == CONTRADICTED:
            # The checker found the contradicting source itself (`repaired`): the claim cited nothing.
            return ClaimRecord(
                plain,
                list(dict.fromkeys(q["doc_id"] for q in quotes)),
                False,
                quotes,
                f"no citation, and an admitted source contradicts it: {reason}",
                repaired=True,
                verdict=verdict,
            )
        return ClaimRecord(
            plain,
            [],
            False,
            reason="no citation, and no admitted source says this"
            + (f" ({reason})" if reason and "cites no source" not in reason else ""),
        )

    def _verdict(
        self, plain: str, passages: Sequence[EvidenceSource], override: tuple[str, Candidate | None] | None = None
    ) -> tuple[str, list[dict[str, str]], str]:
        """Return (verdict, quotes, reason): a word-for-word quote is supported; otherwise the verifier decides
        (the language model's verdict in `override` where it gave one, with the exact checks applied)."""
        quoted = verbatim_quote(plain, passages)  # the extractive composer quotes its sources word for word
        if quoted is not None:
            return SUPPORTED, [_quote(quoted)], ""
        if override is None:
            verdict = judge_claim(plain, passages, embed=self.embed, threshold=self.threshold, cache=self.cache)
        else:
            scored = score_claim(plain, passages, embed=self.embed, model=None, cache=self.cache)
            verdict = decide(scored, support_threshold=1.0, contradict_threshold=1.0, override=override)
        return verdict.verdict, [_quote(q) for q in verdict.support], verdict.reason

    def unverified_names(self, text: str) -> list[tuple[int, int, str]]:
        """Return (start, end, name) of study names no library entry or source of this turn carries."""
        unknown = [mention for mention in study_names(text, self.known_names) if mention.kind != "known"]
        if not unknown:
            return []  # most sentences name no study, or only library ones: the sources need not be read
        # Read now, not at construction: the model's tool calls add sources while it writes.
        corpus = " ".join(f"{s.study_name} {' '.join(s.names)} {s.title} {s.text}" for s in self.evidence.sources)
        # Words inside an identifier or a link ("pubmed" in a PubMed address) are not study names.
        inside = [(m.start, m.end) for m in extract_mentions(text, self.evidence)]
        found = []
        for mention in unknown:
            if mention.name.split()[0] in corpus:
                continue
            if any(start <= mention.start and mention.end <= end for start, end in inside):
                continue
            found.append((mention.start, mention.end, mention.name))
        return found

    def check(self, text: str) -> CheckedText:
        """Return `text` with unsupported claims and unverified study names removed, the records, and removals."""
        self.ask_model(text)
        removals: list[dict[str, str]] = []
        records: list[ClaimRecord] = []
        for claim in reversed(split_claims(text)):
            if META.match(claim.plain) or claim.dangling:
                continue
            record = self.judge(claim)
            records.append(record)
            if not record.supported:
                text = text[: claim.start] + text[claim.end :]
                removals.append(
                    {"kind": "claim", "text": record.text, "reason": record.reason, "verdict": record.verdict}
                )
                removals.extend(
                    {"kind": "identifier", "form": m.form, "value": m.value, "text": m.value, "reason": UNVERIFIED}
                    for m in reversed(extract_mentions(claim.text, self.evidence))
                    if m.source is None
                )
                continue
            body = claim.text
            if record.repaired:
                marker = f" [citation:{record.support[0]['doc_id']}:{record.support[0]['chunk_id']}]"
                stop = re.search(r"[.!?]+\s*$", body)
                cut = stop.start() if stop else len(body)
                body = body[:cut] + marker + body[cut:]
            for start, end, name in reversed(self.unverified_names(body)):
                body = body[:start] + body[end:]
                removals.append({"kind": "study_name", "text": name, "reason": NAME_REMOVED})
            text = text[: claim.start] + body + text[claim.end :]
        records.reverse()
        return CheckedText(tidy(text), records, removals[::-1])

    def screen(self, segment: str) -> str:
        """Return a streamed segment without the claims its own citations do not support (for the preview).

        An uncited claim may still be given its source when the answer is complete; until then it is
        not shown.
        """
        trailing = segment[len(segment.rstrip()) :]
        for start, end, _ in reversed(self.unverified_names(segment)):
            segment = segment[:start] + segment[end:]
        for claim in reversed(split_claims(segment)):
            if META.match(claim.plain) or claim.dangling:
                continue
            record = self.judge(claim)
            if not record.supported or record.repaired:
                segment = segment[: claim.start] + segment[claim.end :]
        cleaned = tidy(segment)
        return cleaned + trailing if cleaned else ""


def _quote(quote: Quote) -> dict[str, str]:
    return {"doc_id": quote.doc_id, "chunk_id": quote.chunk_id, "quote": quote.quote}


def tidy(text: str) -> str:
    """Return `text` without dangling fragments, empty list items or headings left with nothing under them."""
    text = _EMPTY_BULLET.sub("", remove_dangling(text))
    previous = None
    while previous != text:
        previous, text = text, _HEADING_ONLY.sub("", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def contradiction_notice(records: Sequence[ClaimRecord]) -> str:
    """Return a paragraph saying so when the source cited for the answer's first statement contradicts it."""
    first = next(iter(records), None)
    # Only a source the statement itself cited "says otherwise" to the reader.
    if first is None or first.verdict != CONTRADICTED or not first.support or first.repaired:
        return ""
    quote = first.support[0]
    sentence = " ".join(item["quote"] for item in first.support if item["doc_id"] == quote["doc_id"])
    return (
        "The opening statement of the drafted answer was removed because the source it cited says otherwise. "
        f"That source reports: {sentence.rstrip()} [citation:{quote['doc_id']}:{quote['chunk_id']}]\n\n"
    )
