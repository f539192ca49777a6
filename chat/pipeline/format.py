"""Step 8, format: the verified answer, its references and decision aids as one `AnswerResult`."""

from __future__ import annotations

import re
import time
from typing import Any

import structlog

from chat.pipeline.result import AnswerResult, decision_aid_payload
from chat.pipeline.state import AnswerRun
from chat.prompts import PROVIDER_FAILURE_MESSAGE, PROVIDER_FAILURE_NOTICE
from evidence.decision_aids import decision_aids_for

logger = structlog.get_logger(__name__)


def answer_result(run: AnswerRun) -> AnswerResult:
    """Return the run's verified answer as the result to show, store and evaluate."""
    verified, pico, evidence, vocabulary = run.verified, run.require_pico(), run.evidence, run.vocabulary
    assert verified is not None and evidence is not None and vocabulary is not None
    error = None
    if run.error:
        error = run.error.as_dict()
        error["notice"] = (PROVIDER_FAILURE_NOTICE if run.generation else PROVIDER_FAILURE_MESSAGE).format(
            reason=run.error.message.rstrip(".")
        )
    citations = with_support(verified.citations, run)
    result = AnswerResult(
        question=run.question,
        answer=verified.text,
        citations=citations,
        references=verified.references,
        confidence=run.confidence,
        confidence_reasons=run.confidence_reasons,
        claims=claim_records(run, citations),
        claims_removed=run.claims_removed,
        abstention=run.abstention,
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
        removed=[*run.identifiers_removed, *verified.removed],
        error=error,
        context={"tags": run.tags, "context": run.context, "intent": run.intent, "pico": pico.to_dict()},
        decision_aids=[decision_aid_payload(aid) for aid in decision_aids_for(pico, vocabulary)],
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


def with_support(citations: list[dict[str, Any]], run: AnswerRun) -> list[dict[str, Any]]:
    """Return the citation entries each with `support`: the source sentences that back its sentence."""
    quotes: dict[str, list[dict[str, str]]] = {}
    for record in run.claims:
        for quote in record.support:
            quotes.setdefault(quote["doc_id"], []).append({**quote, "claim": record.text})
    entries = []
    for entry in citations:
        sentence = _plain(entry.get("sentence", ""))
        found = [q for q in quotes.get(entry["doc_id"], []) if not sentence or _plain(q["claim"]) in sentence]
        support = found or quotes.get(entry["doc_id"], [])[:1]
        entries.append({**entry, "support": [{k: q[k] for k in ("doc_id", "chunk_id", "quote")} for q in support]})
    return entries


def claim_records(run: AnswerRun, citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the shown claims as {text, citations (reference numbers), supported, verdict, support, reason}."""
    numbers = {entry["doc_id"]: entry["n"] for entry in citations}
    return [
        {
            "text": record.text,
            "citations": sorted({numbers[doc_id] for doc_id in record.doc_ids if doc_id in numbers}),
            "supported": record.supported,
            "verdict": record.verdict,
            "support": record.support,
            "reason": record.reason,
        }
        for record in run.claims
        if record.supported
    ]


def _plain(text: str) -> str:
    return " ".join(re.sub(r"\[[^\]]*\]|[*_`]", "", text).split()).lower()
