"""Step 3, retrieve: library studies for the question's tags (VERIFIED REFERENCES), stored-abstract
chunks from hybrid search, and - when the evidence does not suffice - a live PubMed search."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog
from django.core.cache import cache

from chat.pipeline.state import AnswerRun, TraceStep, names, plural
from evidence import selectors as evidence_selectors
from evidence.concepts import CONDITION, DECISION_ROLE, POPULATION, TOPIC, Concept
from evidence.integrity import is_retraction_notice
from evidence.models import Study
from evidence.pico import GENERIC_DECISIONS
from evidence.sources import EvidenceSource
from evidence.text import is_disease, is_intervention, stems
from pubmed.models import AbstractChunk
from pubmed.query import Concept as QueryConcept
from pubmed.query import QueryError, build_query
from pubmed.ratelimit import ncbi_budget_wait
from pubmed.selectors import retracted_among
from pubmed.services.ingest import fetch_and_cache, live_search_defer
from pubmed.services.search import hybrid_search

logger = structlog.get_logger(__name__)

# A library study is kept when its tag score reaches this share of the best study's score, so a
# colon-cancer question does not pull in breast-cancer studies that share only the "ctdna" tag.
LIBRARY_RELATIVE_SCORE = 0.5
LIVE_SEARCH_DOWN_KEY = "medcite:pubmed-live-search-down"
LIVE_SEARCH_BACKOFF_SECONDS = 300
# Vocabulary synonyms searched per concept besides its label (the query stays readable).
MAX_SYNONYMS = 3
MAX_CONDITIONS = 2
# Synonyms that are ways of asking ("how long", "which drug"), not wordings of the literature.
_QUESTION_PHRASE = re.compile(r"^(?:how|which|what|when|why|whether|should|is|are|do|does)\b", re.IGNORECASE)


def library_lookup(run: AnswerRun) -> TraceStep:
    """Choose the library studies for the question: those it names, then its best tag matches.

    A study PubMed marks retracted (its stored abstract, or the library's latest identifier check)
    is left out of the turn altogether - not chosen, not citable - and named in the trace.
    """
    pico = run.require_pico()
    run.tags = list(pico.disease_tags)
    limit = run.settings.library_limit
    candidates = (
        evidence_selectors.studies_for_tags(tags=run.tags, context=run.context, limit=max(limit * 4, 20))
        if run.tags
        else []
    )
    retracted = retracted_studies(run.library)
    if retracted:
        considered = [*run.named, *run.anchors, *candidates]
        for study in considered:
            if study.pk in retracted:
                run.retracted_excluded[study.pmid] = study.study_name
        run.library = [study for study in run.library if study.pk not in retracted]
        run.named = [study for study in run.named if study.pk not in retracted]
        run.anchors = [study for study in run.anchors if study.pk not in retracted]
        candidates = [study for study in candidates if study.pk not in retracted]
    weights = tag_weights(run.library)
    wanted = set(run.tags)
    run.tag_scores = scores = {
        study.study_name: sum(weights.get(tag.lower(), 0.0) for tag in study.disease_tags if tag.lower() in wanted)
        for study in candidates
    }
    best = max(scores.values(), default=0.0)
    # Among studies matching the same tags, those whose own words answer the question come first
    # ("empagliflozin" picks EMPEROR-Preserved over the HF guideline).
    run.wording = wording = {
        study.study_name: relevance(
            terms=run.terms, text=" ".join([study.study_name, study.title, study.key_finding, *study.aliases])
        )
        for study in candidates
    }
    ranked = sorted(
        (study for study in candidates if scores[study.study_name] >= LIBRARY_RELATIVE_SCORE * best),
        key=lambda study: (
            -scores[study.study_name],
            -wording[study.study_name],
            -study.evidence_strength,
            -(study.publication_year or 0),
        ),
    )
    matched = [*run.named, *[study for study in ranked if study not in run.named]][:limit] if limit else []
    run.matched = matched
    run.intent = (run.classification.anchor_scenario if run.classification else None) or _intent(
        matched, scores, best, run.tags
    )
    chosen = list(dict.fromkeys([*run.anchors, *matched]))
    run.library_sources = [
        (EvidenceSource.from_study(study, approved=True, score=scores.get(study.study_name, 0.0)), study)
        for study in chosen
    ]
    return TraceStep(
        "library",
        "Looked up the curated library",
        plural(len(chosen), "matching study", "matching studies")
        + (f": {names(chosen, 'study_name')}" if chosen else ""),
        {"studies": [source.doc_id for source, _ in run.library_sources], "intent": run.intent},
    )


def retracted_studies(library: Sequence[Study]) -> set[int]:
    """Return the pks of library studies whose PMID PubMed marks retracted (stored abstract or latest check)."""
    by_pmid = {study.pmid: study.pk for study in library if study.pmid}
    stored = {by_pmid[pmid] for pmid in retracted_among(pmids=list(by_pmid))}
    return stored | evidence_selectors.studies_found_retracted(studies=[s for s in library if s.pmid])


def retraction_note(run: AnswerRun) -> TraceStep:
    """Return the trace line naming the retracted papers (and retraction notices) kept out of this answer."""
    parts = []
    for excluded, one, many in (
        (run.retracted_excluded, "retracted abstract was", "retracted abstracts were"),
        (run.notices_excluded, "retraction notice was", "retraction notices were"),
    ):
        if excluded:
            listed = "; ".join(f"PMID {pmid} ({_shorten(title)})" for pmid, title in excluded.items())
            parts.append(f"{plural(len(excluded), one, many)} excluded: {listed}")
    return TraceStep(
        "retractions",
        "Excluded retracted papers",
        ". ".join(parts),
        {
            "excluded": [{"pmid": pmid, "title": title} for pmid, title in run.retracted_excluded.items()],
            "notices": [{"pmid": pmid, "title": title} for pmid, title in run.notices_excluded.items()],
        },
    )


def _shorten(title: str, limit: int = 120) -> str:
    return title if len(title) <= limit else title[:limit].rsplit(" ", 1)[0] + "..."


def _intent(chosen: Sequence[Study], scores: dict[str, float], best: float, tags: Sequence[str]) -> str:
    """Return the anchor scenario most common among the best-scoring studies, else the first tag."""
    top = [study for study in chosen if scores.get(study.study_name, 0.0) >= best] or list(chosen)
    anchors = [anchor for study in top for anchor in study.anchor_scenarios]
    if anchors:
        return min(set(anchors), key=lambda anchor: (-anchors.count(anchor), anchor))
    return tags[0] if tags else "general"


def tag_weights(library: Sequence[Study]) -> dict[str, float]:
    """Return each library disease tag's rarity weight: rare tags say more about a study than common ones."""
    counts: Counter[str] = Counter(tag.lower() for study in library for tag in {t.lower() for t in study.disease_tags})
    total = max(len(library), 1)
    return {tag: math.log(1 + total / count) for tag, count in counts.items()}


def relevance(*, terms: Sequence[str], text: str, weights: dict[str, float] | None = None) -> float:
    """Return the weighted share of the question's content terms that occur in `text` (0-1)."""
    if not terms:
        return 0.0
    weights = weights or {}
    present = stems(text)
    total = sum(weights.get(term, 1.0) for term in terms)
    found = sum(weights.get(term, 1.0) for term in terms if term in present)
    return round(found / total, 3) if total else 0.0


def search_abstracts(run: AnswerRun) -> TraceStep:
    """Search the stored abstracts for the question (each sub-query, abbreviations spelled out)."""
    try:
        run.retrieved, run.retrieval_error = abstract_sources(run), ""
    except Exception as exc:  # search is an enhancement: a failure must not cost the answer
        logger.exception("retrieval_failed", question_chars=len(run.question))
        run.retrieved, run.retrieval_error = [], f"{type(exc).__name__}: {exc}"
    found = len({source.doc_id for source in run.retrieved})
    queries = len(run.sub_queries)
    return TraceStep(
        "retrieve",
        "Searched stored PubMed abstracts",
        (
            "The search of stored abstracts failed; continuing with the library only"
            if run.retrieval_error
            else f"{plural(found, 'abstract', 'abstracts')} found for {queries} quer{'y' if queries == 1 else 'ies'}"
            + (f" (searched as {run.search_text!r})" if run.search_text != run.question else "")
        ),
        {
            "hits": [
                {"doc_id": s.doc_id, "chunk_id": s.chunk_id, "search_score": s.score}
                for s in run.retrieved
                if s.chunk_id == run.best_chunks.get(s.doc_id)
            ],
            "error": run.retrieval_error,
        },
    )


def abstract_sources(run: AnswerRun) -> list[EvidenceSource]:
    """Return every chunk of the best stored abstracts for the question, each abstract's best chunk first.

    Each sub-query (with the question's abbreviations spelled out) is searched with the
    classification's MeSH exclusions; an abstract found by several keeps its best hit. All
    chunks follow, since results and conclusions often sit in a later chunk than the one that
    matched; the judge step decides which abstracts address the question. Retracted abstracts are
    dropped here and named in `run.retracted_excluded`.
    """
    if not AbstractChunk.objects.exists():
        return []  # nothing stored yet: no need to load the embedding model for an empty search
    settings = run.settings
    exclude = run.classification.excluded_mesh if run.classification else []
    expansion = run.search_text[len(run.question) :]
    best: dict[str, Any] = {}
    for query in [f"{sub.text}{expansion}" for sub in run.sub_queries] or [run.search_text or run.question]:
        for hit in hybrid_search(query=query, k=settings.retrieval_k, mesh_exclude=exclude, rerank=settings.rerank):
            if hit.pmid not in best or hit.score > best[hit.pmid].score:
                best[hit.pmid] = hit
    hits = sorted(best.values(), key=lambda hit: hit.score, reverse=True)
    for hit in hits:
        if hit.is_retracted:
            run.retracted_excluded[hit.pmid] = hit.title
        elif is_retraction_notice(hit.publication_types):
            run.notices_excluded[hit.pmid] = hit.title
    hits = [hit for hit in hits if hit.pmid not in run.retracted_excluded and hit.pmid not in run.notices_excluded]
    siblings: dict[str, list[AbstractChunk]] = {}
    for chunk in AbstractChunk.objects.filter(abstract_id__in=[hit.pmid for hit in hits]).only(
        "abstract_id", "ordinal", "section", "text"
    ):
        siblings.setdefault(chunk.abstract_id, []).append(chunk)
    sources = []
    run.best_chunks = {}
    for hit in hits:
        base = EvidenceSource.from_search_hit(hit, score=hit.score)
        run.best_chunks[base.doc_id] = base.chunk_id
        sources.append(base)
        for chunk in sorted(siblings.get(hit.pmid, []), key=lambda item: item.ordinal):
            if chunk.chunk_id != base.chunk_id:
                sources.append(replace(base, chunk_id=chunk.chunk_id, text=chunk.text, section=chunk.section))
    return sources


# Words that judge or measure rather than name a topic; in a PubMed phrase they only lose matches
# ("broken nose satisfactory", "sleep apnoea severity").
_EVALUATIVE_WORDS = """
    satisfactory satisfying worth worthwhile adding severity safe safety effective efficacy benefit benefits
    beneficial useful necessary needed adequate reliable reliably best better optimal recommended protect
    places totally routine routinely
"""
_EVALUATIVE = frozenset(_EVALUATIVE_WORDS.split())


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
    topics = [
        c
        for c in phrases(
            run.question, [c for c in run.concepts if c.role == TOPIC and c.label.lower() not in _EVALUATIVE]
        )
        if c.label.lower() not in outcomes
    ]
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


def phrases(question: str, topics: list[Concept]) -> list[Concept]:
    """Return the topic concepts with neighbours in the question joined ("tranexamic" "acid" → "tranexamic acid")."""
    lowered = question.lower()
    placed = sorted(
        ((lowered.find(c.label.lower()), c) for c in topics if c.label.lower() in lowered), key=lambda pair: pair[0]
    )
    merged: list[tuple[int, Concept]] = []
    for start, concept in placed:
        if merged:
            last_start, last = merged[-1]
            gap = lowered[last_start + len(last.label) : start]
            plain = len(last.forms) == 1 and len(concept.forms) == 1  # abbreviations stand on their own
            if plain and gap.strip(" -") == "" and start > last_start:
                label = question[last_start : start + len(concept.label)]
                merged[-1] = (last_start, replace(last, label=label, weight=max(last.weight, concept.weight)))
                continue
        merged.append((start, concept))
    return [concept for _, concept in merged]


def _query_concept(run: AnswerRun, concept: Concept) -> QueryConcept:
    """Return a question concept as a PubMed query concept: its wordings as the literature writes them."""
    assert run.vocabulary is not None
    term = run.vocabulary.terms.get(concept.code) if concept.code else None
    if term is not None and not (concept.code in GENERIC_DECISIONS and concept.label != term.label):
        phrases, mesh = [term.label, *term.synonyms], list(term.mesh_terms[:1])
    else:
        phrases, mesh = [concept.label, *run.lexicon.wording.get(concept.label.lower(), ())], []
    phrases += run.lexicon.wording.get(concept.label, ())
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
    repeated. Each of its requests waits for a slot at most `live_search_wait_seconds`; when other
    answers hold the budget longer, this answer goes on with stored evidence and the search is handed
    to a Celery worker (when a broker is configured).
    """
    query = live_search_query(run)
    live: dict[str, Any]
    if cache.get(LIVE_SEARCH_DOWN_KEY):
        live = {"ran": False, "query": query, "reason": "PubMed was unreachable a moment ago; not retried yet"}
    else:
        try:
            with ncbi_budget_wait(run.settings.live_search_wait_seconds):
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
    if live.get("ran") and not live.get("error"):
        search_abstracts(run)
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
