"""Step 6, generate: the LLM tool loop or the extractive composer writes the answer from the admitted
evidence; streamed text is scrubbed so no unverified identifier is ever shown. A failing provider
falls back to the extractive composer (when allowed) with the preview reset."""

from __future__ import annotations

from collections.abc import Iterator

import structlog

from chat.pipeline.events import PipelineEvent, ResetEvent, StatusEvent
from chat.pipeline.generation import generation_events
from chat.pipeline.state import AnswerRun, TraceStep
from chat.prompts import build_system_prompt
from chat.providers import get_provider
from chat.providers.base import Generation, GenerationRequest, Provider, ProviderError
from chat.providers.extractive import ExtractiveProvider
from evidence import selectors as evidence_selectors
from evidence.citations.stream import StreamScrubber

logger = structlog.get_logger(__name__)


def generate(run: AnswerRun) -> Iterator[PipelineEvent]:
    """Write the answer into `run.generation`, yielding progress and scrubbed text; record the step."""
    settings, evidence = run.settings, run.evidence
    assert evidence is not None
    request = GenerationRequest(
        question=run.question,
        system_prompt=build_system_prompt(
            verified_references=evidence_selectors.verified_references_block(
                studies=list(dict.fromkeys([*run.anchors, *run.matched]))
            ),
            sources=evidence.sources,
        ),
        evidence=evidence,
        settings=settings,
        history=run.history,
        question_terms=tuple(run.terms),
        term_weights=run.weights,
        concepts=tuple(run.concepts),
        asks=tuple(run.asks),
        focus=run.focus,
        patient=run.patient,
        parts=run.parts,
    )
    provider = get_provider(settings)
    run.provider = run.composed_by = provider.name
    assert run.checker is not None  # the runner builds it once the evidence is admitted
    yield StatusEvent(
        "generate", "Composing the answer from the evidence" if provider.name == "extractive" else "Writing the answer"
    )
    try:
        yield from _streamed(run, provider, request)
    except ProviderError as exc:
        run.error = exc
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
            run.composed_by = "extractive"
            yield from _streamed(run, ExtractiveProvider(), request)
    run.record(generate_trace(run))


def _streamed(run: AnswerRun, provider: Provider, request: GenerationRequest) -> Iterator[PipelineEvent]:
    """Run `provider` through the one provider-event loop; store its final `Generation` on the run."""
    assert run.evidence is not None and run.checker is not None
    scrubber = StreamScrubber(run.evidence, screen=run.checker.screen)
    for event in generation_events(provider, request, scrubber):
        if isinstance(event, Generation):
            run.generation = event
        else:
            yield event


def generate_trace(run: AnswerRun) -> TraceStep:
    """Describe who wrote the answer, in how many rounds, with which tools, and any provider failure."""
    generation, error, settings = run.generation, run.error, run.settings
    tool_calls = generation.tool_calls if generation else []
    return TraceStep(
        "generate",
        "Wrote the answer",
        (
            f"{run.provider} {settings.model}".strip()
            if run.provider != "extractive"
            else "Extractive composer (no language model)"
        )
        + (
            f"; {generation.rounds} round(s)"
            if generation and run.provider != "extractive" and generation.rounds
            else ""
        )
        + (f"; tools: {', '.join(call['name'] for call in tool_calls)}" if tool_calls else "")
        + (f"; provider failed ({error.code}): {error.message}" if error else "")
        + ("; composed from the evidence instead" if error and generation else ""),
        {
            "provider": run.provider,
            "composed_by": run.composed_by if generation else None,
            "model": settings.model,
            "rounds": generation.rounds if generation else 0,
            "usage": generation.usage if generation else {},
            "tool_calls": tool_calls,
            "error": error.as_dict() if error else None,
            "abstained": bool(generation and generation.details.get("abstained")),
        },
    )
