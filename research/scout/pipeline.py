"""The stages of one Evidence Scout run, each recorded on the run as it starts and finishes.

A stage's output is saved on the run (`ScoutRun.state`) as soon as it finishes. Running a run again
- the Celery task redelivered after its worker was killed, or a retry after NCBI failed - skips the
stages already saved and continues at the first unfinished one; the fetch stage itself never
refetches what is stored, and esearch answers come from the shared cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog
from django.conf import settings
from django.utils import timezone

from chat.answer_settings import answer_settings
from chat.providers import json_completer
from evidence import language
from evidence.vocabulary import load_vocabulary
from pubmed.clients import EutilsClient, EutilsUnavailable, eutils_client
from pubmed.models import Abstract
from pubmed.prompts import JsonCompleter
from pubmed.selectors import retracted_among
from pubmed.services.expand import expand_search_terms
from pubmed.services.ingest import fetch_and_cache
from pubmed.services.normalise import normalise_disease
from pubmed.services.rerank import rerank_hits
from pubmed.services.search import RERANK_DEPTH, SearchFilters, semantic_search, therapeutic_query
from pubmed.services.search_queries import search_query_record
from pubmed.services.synthesis import study_type, synthesize
from research.models import ScoutRun, ScoutRunStatus
from research.scout.result import result_document

logger = structlog.get_logger(__name__)

TOP_K = 5
STAGES: list[tuple[str, str]] = [
    ("normalise", "Normalise and verify the disease name"),
    ("expand", "Expand into PubMed queries"),
    ("fetch", "Fetch and cache abstracts"),
    ("search", "Semantic search (top 20)"),
    ("rerank", "Rerank 20 → 5"),
    ("synthesize", "Synthesize the evidence summary"),
]


# What a reader of the run page sees when NCBI cannot be reached; the client's error goes to the log.
PUBMED_UNREACHABLE_DETAIL = "PubMed could not be reached."


def pubmed_unreachable_message(stage: str) -> str:
    """Return the run's one error message when NCBI could not be reached during stage `stage`."""
    number, label = next(
        ((index, label) for index, (key, label) in enumerate(STAGES, start=1) if key == stage), (0, "")
    )
    where = f" at step {number}, “{label}”" if number else ""
    return (
        f"PubMed could not be reached, so this search stopped{where}. Nothing is lost: the finished steps are "
        "kept and the search continues from this step once PubMed answers again."
    )


def initial_steps() -> list[dict[str, Any]]:
    """Return the progress list of a new run: every stage pending."""
    return [{"key": key, "label": label, "status": "pending", "count": None, "detail": "", "seconds": None}
            for key, label in STAGES]


class StageContext:
    """What the stages share during one execution: the run, the NCBI client and the LLM (if any)."""

    def __init__(self, run: ScoutRun, *, client: EutilsClient, complete: JsonCompleter | None) -> None:
        self.run = run
        self.client = client
        self.complete = complete

    def step(self, key: str, **changes: Any) -> None:
        """Update one stage's progress entry and save it at once (the page and API read it live)."""
        for step in self.run.steps:
            if step["key"] == key:
                step.update(changes)
        self.run.stage = key
        ScoutRun.objects.filter(pk=self.run.pk).update(steps=self.run.steps, stage=key)

    def save_output(self, key: str, output: dict[str, Any]) -> None:
        self.run.state[key] = output
        ScoutRun.objects.filter(pk=self.run.pk).update(state=self.run.state)


def _normalise(ctx: StageContext) -> tuple[dict[str, Any], int | None, str]:
    found = normalise_disease(drug=ctx.run.drug, disease=ctx.run.disease, client=ctx.client, complete=ctx.complete)
    hits = found.count if found.count is not None else "unverified"
    detail = f"{found.normalised!r}: {hits} PubMed hits with the drug"
    if found.broadened:
        detail += f" (broadened from {found.tried[0]['term']!r} by {found.broadening})"
    if found.cached:
        detail += " (cached)"
    return found.to_dict(), found.count, detail


def _expand(ctx: StageContext) -> tuple[dict[str, Any], int | None, str]:
    disease = ctx.run.state["normalise"]["normalised"]
    expansion = expand_search_terms(
        drug=ctx.run.drug, disease=disease, profile=ctx.run.profile, complete=ctx.complete,
        vocabulary=load_vocabulary(),
    )
    axes = ", ".join(f"{axis} {n}" for axis, n in expansion.per_axis.items() if n)
    detail = f"{len(expansion.queries)} queries by {expansion.source} ({axes})"
    detail += " (cached)" if expansion.cached else ""
    return expansion.to_dict(), len(expansion.queries), detail + (f"; {expansion.note}" if expansion.note else "")


def _fetch(ctx: StageContext) -> tuple[dict[str, Any], int | None, str]:
    queries = [q["query"] for q in ctx.run.state["expand"]["queries"]]

    def progress(done: int, total: int) -> None:
        ctx.step("fetch", count=done, detail=f"fetched {done} of {total} new abstracts")

    outcome = fetch_and_cache(queries=queries, max_per_query=ctx.run.max_pmids, client=ctx.client,
                              progress=progress)
    if not outcome.per_query and outcome.errors:
        # Nothing answered: retry later (a worker retries the task; the finished stages stay).
        raise EutilsUnavailable("; ".join(outcome.errors)) if outcome.unavailable else RuntimeError(
            "; ".join(outcome.errors))
    # Keyed by the disease as searched, so "HCC" and "hepatocellular carcinoma" share one row.
    disease = ctx.run.state["normalise"]["normalised"]
    record = search_query_record(drug=ctx.run.drug, disease=disease, queries=queries, pmids=outcome.pmids)
    output = {
        "pmids": outcome.pmids,
        "per_query": {q: len(p) for q, p in outcome.per_query.items()},
        "new": outcome.new,
        "failed": len(outcome.failed),
        "errors": outcome.errors[:20],
        "search_query_id": record.pk,
        "timings": outcome.timings,
    }
    detail = f"{outcome.found} PMIDs found, {outcome.new} new abstracts fetched, {len(outcome.failed)} failed"
    return output, outcome.found, detail


def _search(ctx: StageContext) -> tuple[dict[str, Any], int | None, str]:
    """Search the fetched abstracts for the therapeutic question; retracted ones are left out and named."""
    found = ctx.run.state["fetch"]["pmids"]
    retracted = retracted_among(pmids=found)
    pmids = [pmid for pmid in found if pmid not in retracted]
    query = therapeutic_query(drug=ctx.run.drug, disease=ctx.run.state["normalise"]["normalised"])
    hits = semantic_search(query, k=RERANK_DEPTH, filters=SearchFilters(pmids=tuple(pmids))) if pmids else []
    excluded = [{"pmid": pmid, "title": retracted[pmid]} for pmid in found if pmid in retracted]
    output = {"query": query, "hits": [{"pmid": h.pmid, "score": h.score} for h in hits], "retracted": excluded}
    detail = f"{len(hits)} of {len(pmids)} stored abstracts closest to the therapeutic question"
    if retracted:
        listed = "; ".join(f"PMID {item['pmid']} ({item['title']})" for item in excluded)
        count = len(retracted)
        detail += f"; {count} retracted abstract{'s were' if count != 1 else ' was'} excluded: {listed}"
    return output, len(hits), detail


def _rerank(ctx: StageContext) -> tuple[dict[str, Any], int | None, str]:
    query = ctx.run.state["search"]["query"]
    pmids = [hit["pmid"] for hit in ctx.run.state["search"]["hits"]]
    hits = semantic_search(query, k=max(len(pmids), 1), filters=SearchFilters(pmids=tuple(pmids))) if pmids else []
    order = {pmid: index for index, pmid in enumerate(pmids)}
    hits.sort(key=lambda hit: order.get(hit.pmid, len(order)))
    outcome = rerank_hits(query=query, hits=hits, k=TOP_K, complete=ctx.complete)
    output = {"method": outcome.method, "note": outcome.note, "top": [hit.pmid for hit in outcome.hits],
              "scores": outcome.scores}
    return output, len(outcome.hits), f"{outcome.method} reranker kept {len(outcome.hits)}" + (
        f" ({outcome.note})" if outcome.note else "")


def _synthesize(ctx: StageContext) -> tuple[dict[str, Any], int | None, str]:
    top = ctx.run.state["rerank"]["top"]
    by_pmid = Abstract.objects.in_bulk(top)
    abstracts = [by_pmid[pmid] for pmid in top if pmid in by_pmid]
    outcome = synthesize(drug=ctx.run.drug, disease=ctx.run.state["normalise"]["normalised"], abstracts=abstracts,
                         complete=ctx.complete)
    output = {
        "evidence_summary": outcome.summary.to_dict(),
        "method": outcome.method,
        "removed": outcome.removed,
        "note": outcome.note,
        "top": [
            {"pmid": a.pmid, "title": a.title, "journal": a.journal, "year": a.year, "url": a.pubmed_url,
             "study_type": study_type(a)}
            for a in abstracts
        ],
    }
    findings = len(outcome.summary.key_findings)
    return output, findings, f"{findings} key findings by {outcome.method}, {len(outcome.removed)} statements removed"


STAGE_FUNCTIONS: dict[str, Callable[[StageContext], tuple[dict[str, Any], int | None, str]]] = {
    "normalise": _normalise,
    "expand": _expand,
    "fetch": _fetch,
    "search": _search,
    "rerank": _rerank,
    "synthesize": _synthesize,
}


def scout_completer() -> tuple[JsonCompleter | None, str]:
    """Return the JSON completer of the configured LLM (None for the extractive provider) and its name."""
    settings_ = answer_settings()
    if settings_.provider == "extractive":
        return None, "none"
    return json_completer(settings_), f"{settings_.provider}:{settings_.model}"


def scout_run_execute(*, run_id: str, client: EutilsClient | None = None) -> ScoutRun:
    """Run (or resume) the scout run `run_id` to the end; a finished run is returned unchanged.

    Raises EutilsUnavailable when NCBI could not be reached, after recording it on the run and its
    stage, so the task can retry; its message is the reader's (`pubmed_unreachable_message`), the
    client's error is logged and chained. Any other failure marks the run failed and is raised.
    """
    run = ScoutRun.objects.get(pk=run_id)
    if run.finished:
        return run
    complete, llm = scout_completer()
    language.refresh()  # the curated words, read once per run
    ScoutRun.objects.filter(pk=run.pk).update(
        status=ScoutRunStatus.RUNNING, started_at=run.started_at or timezone.now(), attempts=run.attempts + 1,
        error="",
    )
    run.refresh_from_db()
    if not run.steps:
        run.steps = initial_steps()
    ctx = StageContext(run, client=client or eutils_client(), complete=complete)
    try:
        for key, _ in STAGES:
            if key in run.state:
                continue
            ctx.step(key, status="running", detail="", count=None)
            started = time.perf_counter()
            output, count, detail = STAGE_FUNCTIONS[key](ctx)
            output["seconds"] = round(time.perf_counter() - started, 3)
            ctx.save_output(key, output)
            ctx.step(key, status="done", count=count, detail=detail, seconds=output["seconds"])
    except EutilsUnavailable as exc:
        logger.warning("scout_run_ncbi_unreachable", run_id=str(run.pk), stage=run.stage, error=str(exc))
        message = pubmed_unreachable_message(run.stage)
        _stopped(run, ctx, message, detail=PUBMED_UNREACHABLE_DETAIL, finished=False)
        raise EutilsUnavailable(message) from exc
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        _stopped(run, ctx, message, detail=message, finished=True)
        raise
    result = result_document(run, llm=llm, rate_limit=getattr(settings, "NCBI_REQUESTS_PER_SECOND", 3))
    ScoutRun.objects.filter(pk=run.pk).update(
        status=ScoutRunStatus.SUCCEEDED, result=result, stage="", finished_at=timezone.now()
    )
    run.refresh_from_db()
    logger.info("scout_run_finished", run_id=str(run.pk), pmids=result["pmid_count"], reranker=result["reranker"])
    return run


def _stopped(run: ScoutRun, ctx: StageContext, message: str, *, detail: str, finished: bool) -> None:
    if run.stage:
        ctx.step(run.stage, status="failed", detail=detail[:500])
    ScoutRun.objects.filter(pk=run.pk).update(
        status=ScoutRunStatus.FAILED if finished else ScoutRunStatus.PENDING,
        error=message[:2000],
        finished_at=timezone.now() if finished else None,
    )
