"""Step 7a, support: every statement shown must be supported by the source it cites.

The generated answer is split into claims (sentences and list items). A cited claim is judged
against the stored text of what it cites - its numbers, its direction and negation, the studies
and drugs it names, and its meaning as the claim verifier model reads it (`evidence.claims`); a claim
the source contradicts is recorded as contradicted; an uncited claim is attached to an
admitted source that supports it, or removed. Study names that no source of this turn and no
library entry carries are removed, never shown bare. What remains is cleaned of dangling
fragments; every removal is recorded with its reason for the trace and the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import structlog

from chat.pipeline.state import AnswerRun, TraceStep, plural
from chat.providers import json_completer
from evidence.citations.parse import extract_mentions
from evidence.claims import (
    CONTRADICTED,
    NOT_ENOUGH_INFO,
    SUPPORTED,
    Candidate,
    Claim,
    PassageCache,
    Quote,
    decide,
    judge_claim,
    remove_dangling,
    score_claim,
    split_claims,
    study_names,
    verbatim_quote,
)
from evidence.claims.llm_check import JsonCompleter, llm_verdicts
from evidence.models import Abbreviation
from evidence.sources import ORIGIN_LIBRARY, EvidenceSet, EvidenceSource
from pubmed.embeddings import embed_cached

logger = structlog.get_logger("medcite.citations")

# Statements about the evidence itself, written by the composer: not claims about patients.
# Statements about the answer or the page, not about patients: the answer's own framing, and the
# research trays' page actions ("Accept it to run the search", "The column is added below").
META = re.compile(
    r"^\W*(?:the cited (?:evidence|sources?)|weigh |check that |these statements summari[sz]e|"
    r"i could not find|neither the curated|what the evidence does not cover|"
    r"accept |dismiss |(?:here (?:is|are)|try|run)\b[^.]*\b(?:search|query|suggestion|column)|"
    r"(?:this|the) (?:search|query|column|suggestion)s? (?:will |would )?"
    r"(?:narrow|restrict|limit|filter|keep|broaden|widen|add|run|look|is added|appears|is below)\w*)",
    re.IGNORECASE,
)
NAME_REMOVED = "named study without a verified identifier"
UNVERIFIED = "identifier not in this turn's evidence or the library"
_EMPTY_BRACKETS = re.compile(r"\s*[\(\[]\s*[,;:.]*\s*[\)\]]")
_BOTTOM_LINE = re.compile(r"^\W*bottom line\W*", re.IGNORECASE)
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


class SupportChecker:
    """Judge the claims of answers citing one turn's evidence (passage embeddings cached per turn)."""

    def __init__(
        self,
        evidence: EvidenceSet,
        *,
        threshold: float | None,
        known_names: Sequence[str] = (),
        complete: JsonCompleter | None = None,
    ) -> None:
        self.evidence = evidence
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
                    detail = ", ".join(str(part) for part in (chunk.journal, chunk.year) if part)
                    label = f"{chunk.study_name or chunk.title}{f' ({detail})' if detail else ''}: "
                    chunk = replace(chunk, text=f"{label}{chunk.text} {chunk.title}.")
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
            scored.append(score_claim(plain, passages, embed=embed_cached, model=None, cache=self.cache))
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
            return ClaimRecord(
                plain,
                list(dict.fromkeys(q["doc_id"] for q in quotes)),
                False,
                quotes,
                f"no citation, and an admitted source contradicts it: {reason}",
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
            verdict = judge_claim(plain, passages, embed=embed_cached, threshold=self.threshold, cache=self.cache)
        else:
            scored = score_claim(plain, passages, embed=embed_cached, model=None, cache=self.cache)
            verdict = decide(scored, support_threshold=1.0, contradict_threshold=1.0, override=override)
        return verdict.verdict, [_quote(q) for q in verdict.support], verdict.reason

    def unverified_names(self, text: str) -> list[tuple[int, int, str]]:
        """Return (start, end, name) of study names no library entry or source of this turn carries."""
        # Read now, not at construction: the model's tool calls add sources while it writes.
        corpus = " ".join(f"{s.study_name} {' '.join(s.names)} {s.title} {s.text}" for s in self.evidence.sources)
        # Words inside an identifier or a link ("pubmed" in a PubMed address) are not study names.
        inside = [(m.start, m.end) for m in extract_mentions(text, self.evidence)]
        found = []
        for mention in study_names(text, self.known_names):
            if mention.kind == "known" or mention.name.split()[0] in corpus:
                continue
            if any(start <= mention.start and mention.end <= end for start, end in inside):
                continue
            found.append((mention.start, mention.end, mention.name))
        return found

    def check(self, text: str) -> tuple[str, list[ClaimRecord], list[dict[str, str]]]:
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
        return tidy(text), records, removals[::-1]

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
    if first is None or first.verdict != CONTRADICTED or not first.support:
        return ""
    quote = first.support[0]
    sentence = " ".join(item["quote"] for item in first.support if item["doc_id"] == quote["doc_id"])
    return (
        "The opening statement of the drafted answer was removed because the source it cited says otherwise. "
        f"That source reports: {sentence.rstrip()} [citation:{quote['doc_id']}:{quote['chunk_id']}]\n\n"
    )


def checker_for(run: AnswerRun) -> SupportChecker:
    """Return the support checker for this run's admitted evidence."""
    assert run.evidence is not None
    names = [name for study in run.library for name in (study.study_name, *study.aliases) if name]
    known = names + list(Abbreviation.objects.values_list("term", flat=True))
    asks_model = run.settings.provider != "extractive" and run.settings.model_claim_check
    complete = json_completer(run.settings) if asks_model else None
    return SupportChecker(
        run.evidence, threshold=run.settings.claim_support_threshold, known_names=known, complete=complete
    )


def check_support(run: AnswerRun) -> TraceStep:
    """Remove unsupported claims and unverified study names from the generated answer; record why."""
    if run.generation is None or run.evidence is None or run.generation.details.get("abstained"):
        return TraceStep("support", "Checked every statement against its source", "No statement to check.", {})
    checker = run.checker or checker_for(run)
    if run.composed_by == "extractive":  # the extractive composer quotes; a failed model is not asked again
        checker.complete = None
    text, records, removals = checker.check(run.generation.text)
    notice = contradiction_notice(records)
    if notice:  # a verbatim quote of the cited source, shown as the statement it is
        records.insert(0, ClaimRecord(notice.strip(), [records[0].support[0]["doc_id"]], True, records[0].support))
        text = notice + text
    run.generation = replace(run.generation, text=text)
    run.claims = records
    run.claims_removed = [r for r in removals if r["kind"] != "identifier"]
    run.identifiers_removed = [{"form": r["form"], "value": r["value"]} for r in removals if r["kind"] == "identifier"]
    for item in run.identifiers_removed:
        logger.warning("citation_hallucinated", intent=run.intent, form=item["form"], identifier=item["value"])
    removed = sum(1 for r in removals if r["kind"] == "claim")
    contradicted = sum(1 for r in removals if r["kind"] == "claim" and r.get("verdict") == CONTRADICTED)
    names_removed = [r["text"] for r in removals if r["kind"] == "study_name"]
    kept = sum(1 for r in records if r.supported)
    return TraceStep(
        "support",
        "Checked every statement against its source",
        f"{plural(kept, 'statement', 'statements')} supported by the cited text; "
        f"{plural(removed, 'statement', 'statements')} removed as unsupported"
        + (f" ({contradicted} contradicted by the source it cites)" if contradicted else "")
        + (f"; study names removed (no verified identifier): {', '.join(names_removed)}" if names_removed else "")
        + (
            f"; {sum(1 for r in records if r.repaired)} uncited statement(s) given the source that says them"
            if any(r.repaired for r in records)
            else ""
        ),
        {"claims": [r.to_dict() for r in records], "removed": removals},
    )
