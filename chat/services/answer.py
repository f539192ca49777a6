"""The answer pipeline for one question (DESIGN.md section 3, steps 1-9), as a stream of events.

understand -> library lookup -> hybrid search -> generate (LLM tool loop or extractive composer)
-> verify citations -> format references. Streamed text is scrubbed sentence by sentence so no
unverified identifier is ever shown; the final, verified answer arrives in the `DoneEvent`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

from chat.answer_settings import AnswerSettings, answer_settings
from chat.prompts import ABSTENTION_NO_EVIDENCE, PROVIDER_FAILURE_MESSAGE, PROVIDER_FAILURE_NOTICE, build_system_prompt
from chat.providers import get_provider, json_completer
from chat.providers.base import Generation, GenerationRequest, Provider, ProviderError, TextDelta, ToolActivity
from chat.providers.extractive import ExtractiveProvider
from chat.services.planning import (
    Selection,
    candidates_for,
    live_search,
    order_sources,
    plan_question,
    plan_with_library_tags,
    select_evidence,
)
from chat.services.retrieval import (
    abstract_sources,
    library_match,
    library_studies,
    study_source,
    term_weights,
)
from chat.services.text import content_terms
from chat.services.understanding import build_vocabulary
from evidence import selectors as evidence_selectors
from evidence.citations import RED, EvidenceSet, EvidenceSource, StreamScrubber, VerifiedAnswer, verify_answer
from evidence.decision_aids import decision_aids_for
from evidence.models import DecisionAid
from evidence.pico import is_modifier

logger = structlog.get_logger(__name__)

MAX_QUESTION_CHARS = 4000


@dataclass(frozen=True)
class StatusEvent:
    """A pipeline step started (shown as progress while the answer is prepared)."""

    step: str
    message: str


@dataclass(frozen=True)
class DeltaEvent:
    """Scrubbed answer text to append to the preview."""

    text: str


@dataclass(frozen=True)
class ResetEvent:
    """Discard the preview (the provider failed and the answer is being composed again)."""

    reason: str


@dataclass
class AnswerResult:
    """A verified answer with everything needed to show, store, evaluate and reproduce it."""

    question: str
    answer: str
    citations: list[dict[str, Any]]
    references: list[dict[str, Any]]
    confidence: str
    abstained: bool
    trace: list[dict[str, Any]]
    settings_hash: str
    provider: str
    model: str
    intent: str = "general"
    density: float = 0.0
    was_repaired: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, str]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    context: dict[str, Any] = field(default_factory=dict)
    evidence_ids: list[str] = field(default_factory=list)
    decision_aids: list[dict[str, Any]] = field(default_factory=list)

    def ask_json(self) -> dict[str, Any]:
        """Return the `ask --json` / API answer document (DESIGN.md section 6), extended, never renamed."""
        document: dict[str, Any] = {
            "answer": self.answer,
            "citations": self.citations,
            "references": self.references,
            "confidence": self.confidence,
            "abstained": self.abstained,
            "trace": self.trace,
            "settings_hash": self.settings_hash,
            "provider": self.provider,
            "flags": self.flags,
            "decision_aids": self.decision_aids,
        }
        if self.error:
            document["error"] = self.error
        return document

    def extras(self) -> dict[str, Any]:
        """Return what the assistant message stores in `extras`."""
        data = asdict(self)
        for key in ("question", "answer", "context"):
            data.pop(key)
        data["payloads"] = []
        return data


def decision_aid_payload(aid: DecisionAid) -> dict[str, Any]:
    """Return what an answer shows of a curated decision aid."""
    return {
        "title": aid.title,
        "image_url": aid.image.url,
        "alt_text": aid.alt_text,
        "caption": aid.caption,
        "source_url": aid.source_url or (aid.source.url if aid.source else ""),
        "disease_tags": aid.disease_tags,
        "decision_tags": aid.decision_tags,
    }


@dataclass(frozen=True)
class DoneEvent:
    result: AnswerResult


PipelineEvent = StatusEvent | DeltaEvent | ResetEvent | DoneEvent


class _Trace:
    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self.mark = self.started

    def add(self, step: str, label: str, detail: str, **data: Any) -> None:
        now = time.monotonic()
        self.steps.append(
            {"step": step, "label": label, "detail": detail, "duration_ms": int((now - self.mark) * 1000), "data": data}
        )
        self.mark = now


def _names(items: Sequence[Any], attribute: str, limit: int = 6) -> str:
    names = [str(getattr(item, attribute)) for item in items[:limit]]
    more = len(items) - limit
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def _run_provider(
    provider: Provider, request: GenerationRequest, scrubber: StreamScrubber
) -> Iterator[PipelineEvent | Generation]:
    generation: Generation | None = None
    for event in provider.generate(request):
        if isinstance(event, TextDelta):
            safe = scrubber.feed(event.text)
            if safe:
                yield DeltaEvent(safe)
        elif isinstance(event, ToolActivity):
            outcome = "failed" if event.is_error else f"{event.sources} record(s)"
            yield StatusEvent("tool", f"Tool {event.name}: {outcome}")
        elif isinstance(event, Generation):
            generation = event
    tail = scrubber.flush()
    if tail:
        yield DeltaEvent(tail)
    if generation is None:
        raise ProviderError("llm_malformed_output", f"The {provider.name} provider ended without an answer.")
    yield generation


def answer_events(
    *, question: str, history: Sequence[dict[str, str]] = (), settings: AnswerSettings | None = None
) -> Iterator[PipelineEvent]:
    """Answer `question`, yielding progress, scrubbed text and finally a `DoneEvent` with the result.

    Provider failures never escape: they are logged (`llm_provider_error`) and either the
    extractive composer answers instead (`fallback_to_extractive`) or the result carries a clear
    message. Other exceptions (programming errors, a dead database) do propagate.
    """
    settings = settings or answer_settings()
    trace = _Trace()
    question = question.strip()

    yield StatusEvent("understand", "Reading the question")
    llm_json = json_completer(settings) if settings.model_pico and settings.provider != "extractive" else None
    plan = plan_question(question, llm_json=llm_json)
    pico, classification = plan.pico, plan.classification
    studies = library_studies()
    vocabulary = build_vocabulary(studies)
    match = library_match(
        question=question,
        studies=studies,
        limit=settings.library_limit,
        vocabulary=vocabulary,
        extra_tags=[tag for tag in pico.disease_tags if not is_modifier(tag)],
    )
    plan = plan_with_library_tags(plan, match.tags)
    pico, classification = plan.pico, plan.classification
    intent = classification.anchor_scenario or match.intent
    question_terms = content_terms(question)
    weights = term_weights(question=question, vocabulary=vocabulary, tags=match.tags)
    trace.add(
        "understand",
        "Understood the question",
        f"Disease tags: {', '.join(pico.disease_tags) or 'none recognised'}"
        f" (primary {pico.primary_disease_tag or '-'}); decision tags: {', '.join(pico.decision_tags) or 'none'}"
        f" (primary {pico.primary_decision_tag or '-'}); PICO by {pico.source}"
        + (f"; {len(plan.sub_queries)} sub-queries" if len(plan.sub_queries) > 1 else "")
        + (f"; result context: {match.context}" if match.context else "")
        + (f"; studies named: {_names(match.named, 'study_name')}" if match.named else ""),
        tags=match.tags,
        context=match.context,
        intent=intent,
        named_studies=[study.study_name for study in match.named],
        terms=question_terms,
        pico=pico.to_dict(),
        sub_queries=[query.to_dict() for query in plan.sub_queries],
    )
    trace.add(
        "classify",
        "Classified the question",
        f"{classification.classification} (confidence {classification.confidence:.1f})"
        + (
            f"; anchor scenario {classification.anchor_scenario} with {len(plan.anchors)} anchor studies"
            if classification.anchor_scenario
            else "; no anchor scenario"
        )
        + (f"; excluded MeSH: {', '.join(classification.excluded_mesh)}" if classification.excluded_mesh else ""),
        **classification.to_dict(),
        anchors=[study.study_name for study in plan.anchors],
    )
    chosen = list(dict.fromkeys([*plan.anchors, *match.studies]))
    turn_library = [
        (study_source(study, approved=True, score=match.scores.get(study.study_name, 0.0)), study) for study in chosen
    ]
    trace.add(
        "library",
        "Looked up the curated library",
        f"{len(chosen)} matching stud{'y' if len(chosen) == 1 else 'ies'}"
        + (f": {_names(chosen, 'study_name')}" if chosen else ""),
        studies=[source.doc_id for source, _ in turn_library],
    )

    yield StatusEvent("retrieve", "Searching stored PubMed abstracts")

    def retrieve() -> tuple[list[EvidenceSource], str]:
        try:
            found = abstract_sources(
                question=question,
                settings=settings,
                question_terms=question_terms,
                weights=weights,
                queries=[query.text for query in plan.sub_queries],
                mesh_exclude=classification.excluded_mesh,
            )
        except Exception as exc:  # search is an enhancement: a failure must not cost the answer
            logger.exception("retrieval_failed", question_chars=len(question))
            return [], f"{type(exc).__name__}: {exc}"
        return found, ""

    retrieved, retrieval_error = retrieve()

    def select() -> Selection:
        approved_chunks = [source for source in retrieved if source.approved]
        return select_evidence(
            plan=plan,
            candidates=candidates_for(
                plan=plan, library=turn_library, retrieved=approved_chunks, wording=match.wording
            ),
        )

    selection = select()
    trace.add(
        "retrieve",
        "Searched stored PubMed abstracts",
        (
            f"Search failed ({retrieval_error}); continuing with the library only"
            if retrieval_error
            else f"{len(retrieved)} chunk(s) retrieved for {len(plan.sub_queries)} quer"
            f"{'y' if len(plan.sub_queries) == 1 else 'ies'}, "
            f"{len({s.doc_id for s in retrieved if s.approved})} abstract(s) relevant enough to cite "
            f"(relevance >= {settings.min_relevance:g})"
        ),
        hits=[
            {"doc_id": s.doc_id, "chunk_id": s.chunk_id, "relevance": s.score, "approved": s.approved}
            for s in retrieved
        ],
        error=retrieval_error,
    )
    verdict = selection.sufficiency
    trace.add(
        "sufficiency",
        "Judged whether the evidence suffices",
        f"{verdict.score}/100 ({verdict.level}): {verdict.reasoning}. Live search: {verdict.external_search_reason}.",
        **verdict.to_dict(),
    )
    if verdict.external_search and settings.live_search:
        yield StatusEvent("live_search", "Searching PubMed for more evidence")
        try:
            live = live_search(plan=plan, question=question, max_results=settings.live_search_max_results)
        except Exception as exc:  # the live search must never cost the answer
            logger.exception("live_search_failed")
            live = {"ran": True, "error": f"{type(exc).__name__}: {exc}"}
        if live.get("ran") and not live.get("error"):
            retrieved, retrieval_error = retrieve()
            selection = select()
        trace.add(
            "live_search",
            "Searched PubMed live",
            (
                f"Query {live.get('query', '')!r}: {live.get('found', 0)} found, {live.get('new', 0)} new"
                if live.get("ran") and not live.get("error")
                else f"Not run: {live.get('reason') or live.get('error')}"
            )
            + (f"; errors: {'; '.join(live['errors'])}" if live.get("errors") else ""),
            **live,
        )
    ranking = selection.ranking
    trace.add(
        "rank",
        "Ranked the evidence by tag relevance",
        f"{len(ranking.items)} kept, {len(ranking.excluded)} excluded (tag relevance < 10)"
        + ("; relaxed with broader reviews" if ranking.relaxed else ""),
        **ranking.trace(),
    )
    ordered = order_sources([*(source for source, _ in turn_library), *retrieved], selection.kept)
    evidence = EvidenceSet(ordered, library=[study_source(study, approved=False) for study in studies])
    aids = decision_aids_for(pico)

    system_prompt = build_system_prompt(
        verified_references=evidence_selectors.verified_references_block(studies=chosen),
        sources=evidence.sources,
    )
    request = GenerationRequest(
        question=question,
        system_prompt=system_prompt,
        evidence=evidence,
        settings=settings,
        history=list(history),
        question_terms=tuple(question_terms),
        term_weights=weights,
    )
    provider = get_provider(settings)
    yield StatusEvent(
        "generate", "Composing the answer from the evidence" if provider.name == "extractive" else "Writing the answer"
    )
    error: ProviderError | None = None
    generation: Generation | None = None
    composed_by = provider.name
    try:
        for event in _run_provider(provider, request, StreamScrubber(evidence)):
            if isinstance(event, Generation):
                generation = event
            else:
                yield event
    except ProviderError as exc:
        error = exc
        logger.warning(
            "llm_provider_error",
            provider=provider.name,
            model=settings.model,
            code=exc.code,
            status=exc.status,
            error=exc.message,
        )
        if settings.fallback_to_extractive:
            yield ResetEvent(exc.code)
            yield StatusEvent("fallback", "The language model failed; composing the answer from the evidence")
            composed_by = "extractive"
            for event in _run_provider(ExtractiveProvider(), request, StreamScrubber(evidence)):
                if isinstance(event, Generation):
                    generation = event
                else:
                    yield event

    tool_calls = generation.tool_calls if generation else []
    trace.add(
        "generate",
        "Wrote the answer",
        (
            f"{provider.name} {settings.model}".strip()
            if provider.name != "extractive"
            else "Extractive composer (no language model)"
        )
        + (
            f"; {generation.rounds} round(s)"
            if generation and provider.name != "extractive" and generation.rounds
            else ""
        )
        + (f"; tools: {', '.join(call['name'] for call in tool_calls)}" if tool_calls else "")
        + (f"; provider failed ({error.code}): {error.message}" if error else "")
        + ("; composed from the evidence instead" if error and generation else ""),
        provider=provider.name,
        composed_by=composed_by if generation else None,
        model=settings.model,
        rounds=generation.rounds if generation else 0,
        usage=generation.usage if generation else {},
        tool_calls=tool_calls,
        error=error.as_dict() if error else None,
    )

    if generation is None:
        assert error is not None
        verified = VerifiedAnswer(
            text=PROVIDER_FAILURE_MESSAGE.format(reason=error.message.rstrip(".")),
            citations=[],
            references=[],
            confidence=RED,
            density=0.0,
            sentences=0,
            cited_sentences=0,
            removed=[],
            flags=[],
            was_repaired=False,
            abstained=True,
        )
    else:
        verified = verify_answer(
            text=generation.text,
            evidence=evidence,
            intent=intent,
            # The composer abstaining is a judgement on the evidence, not a missing citation to repair.
            repair_max_sources=0 if generation.details.get("abstained") else settings.repair_max_sources,
            abstention=ABSTENTION_NO_EVIDENCE,
        )
    trace.add(
        "verify",
        "Verified every citation",
        f"{len(verified.references)} source(s) cited and verified; "
        f"{len(verified.removed)} unverifiable identifier(s) removed; "
        f"{verified.named_studies_attached} named study mention(s) given a verified identifier; "
        f"{'repaired by attaching the top sources' if verified.was_repaired else 'no repair needed'}"
        + ("; abstained" if verified.abstained else ""),
        removed=verified.removed,
        flags=verified.flags,
        named_studies_attached=verified.named_studies_attached,
        was_repaired=verified.was_repaired,
        abstained=verified.abstained,
    )
    trace.add(
        "confidence",
        "Rated confidence",
        f"{verified.confidence}: {len(verified.references)} cited source(s), "
        f"{verified.cited_sentences} of {verified.sentences} sentences cited (density {verified.density:.2f})",
        confidence=verified.confidence,
        density=verified.density,
        sentences=verified.sentences,
        cited_sentences=verified.cited_sentences,
    )
    error_dict = None
    if error:
        error_dict = error.as_dict()
        error_dict["notice"] = (PROVIDER_FAILURE_NOTICE if generation else PROVIDER_FAILURE_MESSAGE).format(
            reason=error.message.rstrip(".")
        )
    result = AnswerResult(
        question=question,
        answer=verified.text,
        citations=verified.citations,
        references=verified.references,
        confidence=verified.confidence,
        abstained=verified.abstained,
        trace=trace.steps,
        settings_hash=settings.short_hash(),
        provider=composed_by,
        model=settings.model if composed_by != "extractive" else "",
        intent=intent,
        density=verified.density,
        was_repaired=verified.was_repaired,
        tool_calls=tool_calls,
        flags=verified.flags,
        removed=verified.removed,
        error=error_dict,
        context={"tags": match.tags, "context": match.context, "intent": intent, "pico": pico.to_dict()},
        decision_aids=[decision_aid_payload(aid) for aid in aids],
        evidence_ids=sorted({f"{kind}:{key}" for source in evidence.sources for kind, key in source.identifier_keys()}),
    )
    logger.info(
        "answer_complete",
        intent=intent,
        provider=composed_by,
        confidence=result.confidence,
        abstained=result.abstained,
        references=len(result.references),
        settings_hash=result.settings_hash,
        duration_ms=int((time.monotonic() - trace.started) * 1000),
    )
    yield DoneEvent(result)


def answer_question(
    *, question: str, history: Sequence[dict[str, str]] = (), settings: AnswerSettings | None = None
) -> AnswerResult:
    """Answer `question` and return the verified result (the non-streaming form of `answer_events`)."""
    for event in answer_events(question=question, history=history, settings=settings):
        if isinstance(event, DoneEvent):
            return event.result
    raise RuntimeError("The answer pipeline ended without a result.")
