"""Step 3, retrieve: library studies for the question's tags (VERIFIED REFERENCES), stored-abstract
chunks from hybrid search, and - when the evidence does not suffice - a live PubMed search."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog

from chat.pipeline.state import AnswerRun, TraceStep, names, plural
from evidence import selectors as evidence_selectors
from evidence.integrity import is_retraction_notice
from evidence.models import Study
from evidence.sources import EvidenceSource
from evidence.text import stems
from pubmed.selectors import chunks_of, chunks_stored, retracted_among
from pubmed.services.search import hybrid_search

logger = structlog.get_logger(__name__)

# A library study is kept when its tag score reaches this share of the best study's score, so a
# colon-cancer question does not pull in breast-cancer studies that share only the "ctdna" tag.
LIBRARY_RELATIVE_SCORE = 0.5


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
        (_with_answer_kinds(EvidenceSource.from_study(study, score=scores.get(study.study_name, 0.0)), run), study)
        for study in chosen
    ]
    return TraceStep(
        "library",
        "Looked up the curated library",
        plural(len(chosen), "matching study", "matching studies")
        + (f": {names(chosen, 'study_name')}" if chosen else ""),
        {"studies": [source.doc_id for source, _ in run.library_sources], "intent": run.intent},
    )


def _with_answer_kinds(source: EvidenceSource, run: AnswerRun) -> EvidenceSource:
    """Return `source` with the kind of answer each curated finding's decision tags ask for (the composer leads with
    a finding tagged for the kind a question asks: "how long?" and the duration tag)."""
    if run.vocabulary is None or not source.findings:
        return source
    kind = run.vocabulary.answer_kind
    findings = tuple(replace(f, answer_kinds=tuple(kind(tag) for tag in f.decision_tags)) for f in source.findings)
    return replace(source, findings=findings)


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
    if not chunks_stored():
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
    siblings = chunks_of(pmids=[hit.pmid for hit in hits])
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
