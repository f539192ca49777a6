"""Step 3b, live search: when stored evidence does not suffice, search PubMed for the question's concepts,
store what it finds, and hand the search to a worker when the shared NCBI budget is busy."""

from __future__ import annotations

import re
from typing import Any

import structlog
from django.core.cache import cache

from chat.pipeline.state import AnswerRun, TraceStep, plural
from config.http_retries import time_limit
from evidence import language
from evidence.concepts import CONDITION, DECISION_ROLE, POPULATION, TOPIC, Concept, joined_phrases
from evidence.text import is_disease, is_intervention
from pubmed.query import Concept as QueryConcept
from pubmed.query import QueryError, build_query
from pubmed.ratelimit import ncbi_budget_wait
from pubmed.services.ingest import fetch_and_cache, live_search_defer

logger = structlog.get_logger(__name__)

LIVE_SEARCH_DOWN_KEY = "medcite:pubmed-live-search-down"
LIVE_SEARCH_BACKOFF_SECONDS = 300
# Vocabulary synonyms searched per concept besides its label (the query stays readable).
MAX_SYNONYMS = 3
MAX_CONDITIONS = 2
# Words that judge or measure rather than name a topic; in a PubMed phrase they only lose matches
# ("broken nose satisfactory", "sleep apnoea severity").
JUDGING = language.WordClass.JUDGING.value
# Synonyms that are ways of asking ("how long", "which drug"), not wordings of the literature.
_QUESTION_PHRASE = re.compile(r"^(?:how|which|what|when|why|whether|should|is|are|do|does)\b", re.IGNORECASE)


def live_search_query(run: AnswerRun) -> str:
    """Return the PubMed query for the live search: the condition AND the decision or intervention.

    At most two conditions (the primary first; the question's rarest topic word when no condition
    tag was recognised) and one decision or intervention, each searched by its clinical wordings
    (vocabulary synonyms and MeSH, or what an abbreviation stands for); older age and the outcome
    are optional. The condition is never dropped and no clause repeats (`pubmed.query.build_query`).
    """
    pico = run.require_pico()
    outcomes = [part.strip() for part in pico.outcome.split(",") if part.strip()]
    # Topic phrases in question order; "Does X improve Y in Z?" names the intervention first and the
    # condition last. Outcome words join as an optional concept.
    judging = language.words(JUDGING)
    asked = [c for c in run.concepts if c.role == TOPIC and c.label.lower() not in judging]
    topics = [c for c in joined_phrases(run.question, asked) if c.label.lower() not in outcomes]
    conditions = [c for c in run.concepts if c.role == CONDITION][:MAX_CONDITIONS]
    decisions = [c for c in run.concepts if c.role == DECISION_ROLE]
    # Without a vocabulary tag, a drug-shaped or intervention word is the intervention and a
    # disease-shaped word the condition, wherever they stand in the question.
    guessed = next((c for c in topics if is_intervention(c.label) and not is_disease(c.label)), None)
    if not conditions and topics:
        others = [c for c in topics if c is not guessed] or topics
        conditions = [next((c for c in others if is_disease(c.label)), others[-1])]
    rest = [c for c in topics if c not in conditions]
    fallback = guessed if guessed is not None and guessed not in conditions else (rest[0] if rest else None)
    intervention = decisions[0] if decisions else fallback
    chosen = [*conditions, *([intervention] if intervention else [])]
    concepts = [_query_concept(run, concept) for concept in chosen]
    if any(c.role == POPULATION for c in run.concepts):
        concepts.append(QueryConcept(synonyms=["aged", "elderly", "older adults"], mesh=["Aged"], optional=True))
    if outcomes:
        concepts.append(QueryConcept(synonyms=outcomes[:2], optional=True))
    try:
        return build_query(concepts)
    except QueryError:
        return " ".join(run.question.split()[:20])


def _query_concept(run: AnswerRun, concept: Concept) -> QueryConcept:
    """Return a question concept as a PubMed query concept: its wordings as the literature writes them."""
    assert run.vocabulary is not None
    term = run.vocabulary.terms.get(concept.code) if concept.code else None
    if term is not None and not (term.is_generic and concept.label != term.label):
        phrases, mesh = [term.label, *term.synonyms], list(term.mesh_terms[:1])
    else:
        phrases, mesh = [concept.label, *run.lexicon.wording.get(concept.label.lower(), ())], []
    phrases += run.lexicon.wording.get(concept.label, ())
    # "PsA" read as Pseudomonas aeruginosa is searched by its meaning: PubMed would read it as PSA too.
    phrases = [p for p in phrases if not run.lexicon.is_ambiguous(p)] or phrases
    searchable = [
        p for p in dict.fromkeys(phrases) if (len(p.strip()) > 2 or p.isupper()) and not _QUESTION_PHRASE.match(p)
    ]
    return QueryConcept(synonyms=searchable[: MAX_SYNONYMS + 1] or [concept.label], mesh=mesh)


def _live_errors_for_people(live: dict[str, Any]) -> str:
    """Say what went wrong with the live search in plain words (the NCBI error texts are logged)."""
    if live.get("unavailable"):
        return "PubMed could not be reached, so only stored evidence was used"
    if live.get("busy"):
        return (
            "PubMed's shared request budget was taken by other answers, so stored evidence was used"
            + ("; the search was queued and its results will be stored for later questions" if live.get("deferred")
               else "")
        )
    return f"{plural(len(live['errors']), 'PubMed request', 'PubMed requests')} failed; the rest were used"


def search_live(run: AnswerRun) -> TraceStep:
    """Search PubMed live, store what it finds and search the store again; record what happened.

    After a failure (NCBI unreachable) the live search is skipped for five minutes, so an offline
    deployment answers from stored evidence without waiting on retries for every question.

    The search costs the shared NCBI budget only for what no one fetched before: its esearch answer is
    cached for every user, stored abstracts are never fetched again, and an identical search running
    for another user right now is waited for (at most `live_search_coalesce_seconds`) rather than
    repeated. Its requests, retries included, keep the answer waiting at most `live_search_seconds` (an
    unreachable PubMed had cost 8 s of backoff). Each waits for a slot at most `live_search_wait_seconds`; when other
    answers hold the budget longer, this answer goes on with stored evidence and the search is handed
    to a Celery worker (when a broker is configured).
    """
    query = live_search_query(run)
    live: dict[str, Any]
    if cache.get(LIVE_SEARCH_DOWN_KEY):
        live = {"ran": False, "query": query, "reason": "PubMed was unreachable a moment ago; not retried yet"}
    else:
        try:
            with ncbi_budget_wait(run.settings.live_search_wait_seconds), time_limit(run.settings.live_search_seconds):
                outcome = fetch_and_cache(
                    queries=[query],
                    max_per_query=run.settings.live_search_max_results,
                    coalesce_wait_seconds=run.settings.live_search_coalesce_seconds,
                )
        except Exception:  # the live search must never cost the answer
            logger.exception("live_search_failed")
            live = {"ran": True, "query": query, "error": "the live search failed"}
        else:
            if outcome.unavailable:
                cache.set(LIVE_SEARCH_DOWN_KEY, True, LIVE_SEARCH_BACKOFF_SECONDS)
            deferred = outcome.busy and live_search_defer(
                query=query, max_per_query=run.settings.live_search_max_results
            )
            logger.info(
                "live_pubmed_search", query=query, found=outcome.found, new=outcome.new, errors=len(outcome.errors),
                coalesced=outcome.coalesced, busy=outcome.busy, deferred=deferred,
            )
            if outcome.errors and not outcome.busy:
                logger.warning("live_pubmed_search_errors", query=query, errors=outcome.errors)
            live = {
                "ran": True,
                "query": query,
                "found": outcome.found,
                "new": outcome.new,
                "pmids": outcome.pmids,
                "errors": outcome.errors[:3],
                "unavailable": outcome.unavailable,
                "busy": outcome.busy,
                "deferred": deferred,
                "coalesced": outcome.coalesced,
            }
    run.live = live
    return TraceStep(
        "live_search",
        "Searched PubMed live",
        (
            f"Query {query!r}: {live.get('found', 0)} found, {live.get('new', 0)} new"
            + (" (an identical search for another user was waited for)" if live.get("coalesced") else "")
            if live.get("ran") and not live.get("error")
            else f"Not run: {live.get('reason') or live.get('error')}"
        )
        + (f"; {_live_errors_for_people(live)}" if live.get("errors") else ""),
        live,
    )


def live_search_stored(run: AnswerRun) -> bool:
    """Return True when the live search ran and stored what it found, so the store is worth searching again."""
    return bool(run.live and run.live.get("ran") and not run.live.get("error"))

