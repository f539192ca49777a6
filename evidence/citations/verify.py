"""Verify a generated answer: resolve every citation, number the references, repair an uncited answer.

Model output is never trusted: what resolves against the turn's evidence becomes a numbered
marker pointing at a reference; what does not is removed from the text, never linked, and
logged as `citation_hallucinated`. Pure functions (no database).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

from evidence.citations.parse import CLOSE, OPEN, PLACEHOLDER, Placeholders, rewrite
from evidence.confidence import GREEN, RED, YELLOW
from evidence.references import format_reference
from evidence.sentences import split_sentences
from evidence.sources import EvidenceSet, EvidenceSource

logger = structlog.get_logger("medcite.citations")

GREEN_MIN_CITATIONS = 2
GREEN_MIN_DENSITY = 0.3
DEFAULT_ABSTENTION = (
    "I could not find enough verifiable evidence to answer this question. None of the curated "
    "library studies or the stored PubMed abstracts addresses it closely enough to cite, so I "
    "would rather not guess. Try rephrasing with the condition, the intervention and the outcome "
    "you care about, or search PubMed for primary studies."
)
SOURCES_HEADING = "**Sources**"
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*]+\*\*:?|__[^_]+__:?|[A-Z][A-Za-z /&'-]{0,60}:)\s*$")
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)])\s+)")
_REFERENCE_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*"
    r"(?:references|sources|bibliography|citations|works cited)"
    r"\s*:?\s*(?:\*\*|__)?\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z]{2,}")


def _is_countable(sentence: str) -> bool:
    return len(_WORD.findall(PLACEHOLDER.sub("", sentence))) >= 2


def _insert_marker(sentence: str, marker: str) -> str:
    if re.search(rf"{CLOSE}\s*$", sentence):
        return sentence.rstrip() + marker
    match = re.search(r"([.!?:;]+)\s*$", sentence)
    if match:
        head = sentence[: match.start()].rstrip()
        return head + ("" if head.endswith(CLOSE) else " ") + marker + match.group(1)
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
    text = (text or "").replace("\r\n", "\n").replace(OPEN, "").replace(CLOSE, "").strip()
    placeholders = Placeholders()
    removed: list[dict[str, str]] = []
    prose, listed = _split_reference_section(text)
    prose = rewrite(prose, evidence, placeholders, removed)
    listed_docs = placeholders.docs_in(rewrite(listed, evidence, placeholders, removed)) if listed else []
    for item in removed:
        logger.warning("citation_hallucinated", intent=intent, form=item["form"], identifier=item["value"])

    body = _parse_body(prose)
    attached, flags = _attach_named_studies(body, evidence, placeholders, intent)
    body_text = body.render()
    body_docs = placeholders.docs_in(body_text)
    sentences = [sentence for sentence in body.sentences() if _is_countable(sentence)]
    cited_sentences = sum(1 for sentence in sentences if PLACEHOLDER.search(sentence))
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
        rendered = PLACEHOLDER.sub(lambda m: f"[{numbering[placeholders.sources[int(m.group(1))].doc_id]}]", fragment)
        return re.sub(r"(\[\d+\])(?:\1)+", r"\1", rendered)

    final = render(body_text)
    if sources_docs:
        lines = [SOURCES_HEADING]
        for doc_id in sources_docs:
            entry = evidence.describe(doc_id)
            assert entry is not None
            lines.append(f"- [{numbering[doc_id]}] {_source_line(entry)}")
        final = (final + "\n\n" if final else "") + "\n".join(lines)

    citations = _citation_entries(body, placeholders, numbering, sources_docs, evidence)
    references = []
    for doc_id, number in sorted(numbering.items(), key=lambda item: item[1]):
        described = evidence.describe(doc_id)
        assert described is not None
        reference = format_reference(described, origins=evidence.origins(doc_id))
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
    body: _Body, evidence: EvidenceSet, placeholders: Placeholders, intent: str
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
            plain = PLACEHOLDER.sub("", sentence)
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
    placeholders: Placeholders,
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
            plain = PLACEHOLDER.sub("", sentence).strip()
            for index in PLACEHOLDER.findall(sentence):
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
