"""Step 8, format: the verified answer, its references and decision aids as one `AnswerResult`."""

from __future__ import annotations

import time

import structlog

from chat.pipeline.result import AnswerResult, decision_aid_payload
from chat.pipeline.state import AnswerRun
from chat.prompts import PROVIDER_FAILURE_MESSAGE, PROVIDER_FAILURE_NOTICE
from evidence.decision_aids import decision_aids_for

logger = structlog.get_logger(__name__)


def answer_result(run: AnswerRun) -> AnswerResult:
    """Return the run's verified answer as the result to show, store and evaluate."""
    verified, pico, evidence = run.verified, run.require_pico(), run.evidence
    assert verified is not None and evidence is not None
    error = None
    if run.error:
        error = run.error.as_dict()
        error["notice"] = (PROVIDER_FAILURE_NOTICE if run.generation else PROVIDER_FAILURE_MESSAGE).format(
            reason=run.error.message.rstrip(".")
        )
    result = AnswerResult(
        question=run.question,
        answer=verified.text,
        citations=verified.citations,
        references=verified.references,
        confidence=run.confidence,
        confidence_reasons=run.confidence_reasons,
        abstained=verified.abstained,
        trace=run.trace,
        settings_hash=run.settings.short_hash(),
        provider=run.composed_by,
        model=run.settings.model if run.composed_by != "extractive" else "",
        intent=run.intent,
        density=verified.density,
        was_repaired=verified.was_repaired,
        tool_calls=run.generation.tool_calls if run.generation else [],
        flags=verified.flags,
        removed=verified.removed,
        error=error,
        context={"tags": run.tags, "context": run.context, "intent": run.intent, "pico": pico.to_dict()},
        decision_aids=[decision_aid_payload(aid) for aid in decision_aids_for(pico)],
        evidence_ids=sorted({f"{kind}:{key}" for source in evidence.sources for kind, key in source.identifier_keys()}),
    )
    logger.info(
        "answer_complete",
        intent=run.intent,
        provider=run.composed_by,
        confidence=result.confidence,
        abstained=result.abstained,
        references=len(result.references),
        settings_hash=result.settings_hash,
        duration_ms=int((time.monotonic() - run.started) * 1000),
    )
    return result
