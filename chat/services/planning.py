"""Steps 1-5 of the answer pipeline in PICO-first form: understand, classify, rank, judge, search live.

The question becomes a PICO with disease and decision tags (vocabulary-driven, or model-proposed
and validated); the tags pick a classification rule (MeSH filters, anchor scenario); retrieved
library studies and abstracts are ranked by tag relevance; sufficiency decides whether the live
PubMed search runs. Everything that was decided is returned for the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog
from django.core.cache import cache

from evidence.citations import ORIGIN_LIBRARY, EvidenceSource
from evidence.classification import Classification, classify, load_rules
from evidence.decomposition import SubQuery, decompose_question
from evidence.models import Study
from evidence.pico import LlmJson, Pico, choose_primary_disease, extract_pico
from evidence.ranking import Candidate, RankingResult, rank_references
from evidence.sufficiency import Sufficiency, safe_score_sufficiency
from evidence.vocabulary import DECISION, DISEASE, Vocabulary, load_vocabulary

logger = structlog.get_logger(__name__)

REVIEW_TYPES = frozenset(
    {
        "review",
        "systematic review",
        "meta-analysis",
        "practice guideline",
        "guideline",
        "consensus development conference",
    }
)
LIBRARY_REVIEW_KINDS = frozenset({"guideline", "meta-analysis", "systematic-review"})
LIVE_SEARCH_DOWN_KEY = "medcite:pubmed-live-search-down"
LIVE_SEARCH_BACKOFF_SECONDS = 300


@dataclass(frozen=True)
class QuestionPlan:
    vocabulary: Vocabulary
    pico: Pico
    sub_queries: list[SubQuery]
    classification: Classification
    anchors: list[Study]

    def trace_data(self) -> dict[str, Any]:
        return {
            "pico": self.pico.to_dict(),
            "sub_queries": [query.to_dict() for query in self.sub_queries],
            "classification": self.classification.to_dict(),
            "anchors": [study.study_name for study in self.anchors],
        }


def plan_question(question: str, *, llm_json: LlmJson | None = None) -> QuestionPlan:
    """Return the PICO, retrieval queries, classification and anchor studies for `question`."""
    vocabulary = load_vocabulary()
    pico = extract_pico(question, vocabulary=vocabulary, llm_json=llm_json)
    sub_queries = decompose_question(question, pico=pico, vocabulary=vocabulary, llm_json=llm_json)
    return _classified(vocabulary, pico, sub_queries)


def plan_with_library_tags(plan: QuestionPlan, tags: Sequence[str]) -> QuestionPlan:
    """Return the plan with `tags` as the PICO's disease tags when the vocabulary recognised none.

    The library's own wording (e.g. a tag the vocabulary does not list yet) then still drives
    ranking and classification instead of every study scoring zero.
    """
    if plan.pico.disease_tags or not tags:
        return plan
    disease_tags = list(dict.fromkeys(tag.lower() for tag in tags))
    pico = replace(
        plan.pico,
        disease_tags=disease_tags,
        primary_disease_tag=choose_primary_disease(disease_tags),
        secondary_disease_tags=[t for t in disease_tags if t != choose_primary_disease(disease_tags)],
        notes=[*plan.pico.notes, "disease tags taken from the library's wording"],
    )
    return _classified(plan.vocabulary, pico, plan.sub_queries)


def _classified(vocabulary: Vocabulary, pico: Pico, sub_queries: list[SubQuery]) -> QuestionPlan:
    classification = classify(pico, rules=load_rules())
    anchors = (
        list(
            Study.objects.filter(anchor_scenarios__contains=[classification.anchor_scenario]).order_by(
                "-evidence_strength", "-publication_year", "study_name"
            )
        )
        if classification.anchor_scenario
        else []
    )
    return QuestionPlan(vocabulary, pico, sub_queries, classification, anchors)


def _abstract_mesh(pmids: Sequence[str]) -> dict[str, list[str]]:
    from pubmed.models import Abstract

    return dict(Abstract.objects.filter(pmid__in=list(pmids)).values_list("pmid", "mesh_terms"))


def candidates_for(
    *,
    plan: QuestionPlan,
    library: Sequence[tuple[EvidenceSource, Study]],
    retrieved: Sequence[EvidenceSource],
    wording: dict[str, float] | None = None,
) -> list[Candidate]:
    """Return one ranking candidate per document: library studies by their tags, abstracts by text + MeSH.

    `wording` (study name → share of the question's words in the study's own text) breaks ties
    between studies with the same tags: "empagliflozin" puts EMPEROR-Preserved before DELIVER.
    """
    wording = wording or {}
    anchors = {study.pk for study in plan.anchors}
    candidates = [
        Candidate(
            key=source.doc_id,
            title=study.study_name,
            disease_tags=frozenset(tag.lower() for tag in study.disease_tags),
            decision_tags=frozenset(tag.lower() for tag in study.decision_tags),
            is_primary_study=study.kind in {"trial", "cohort"},
            is_review=study.kind in LIBRARY_REVIEW_KINDS,
            source="library",
            year=study.publication_year,
            retrieval_score=1.0 + wording.get(study.study_name, 0.0) + 0.01 * source.score,
            strength=study.evidence_strength,
            is_anchor=study.pk in anchors,
        )
        for source, study in library
    ]
    by_doc: dict[str, list[EvidenceSource]] = {}
    for source in retrieved:
        by_doc.setdefault(source.doc_id, []).append(source)
    mesh = _abstract_mesh([chunks[0].pmid for chunks in by_doc.values() if chunks[0].pmid])
    vocabulary = plan.vocabulary
    for doc_id, chunks in by_doc.items():
        first = chunks[0]
        text = " ".join([first.title, *(chunk.text for chunk in chunks)])
        terms = mesh.get(first.pmid, [])
        types = {value.lower() for value in first.publication_types}
        is_review = bool(types & REVIEW_TYPES)
        candidates.append(
            Candidate(
                key=doc_id,
                title=first.title,
                disease_tags=frozenset(vocabulary.tags_in(text, DISEASE)) | vocabulary.tags_for_mesh(terms, DISEASE),
                decision_tags=frozenset(vocabulary.tags_in(text, DECISION)) | vocabulary.tags_for_mesh(terms, DECISION),
                is_primary_study=not is_review,
                is_review=is_review,
                source="pubmed",
                year=first.year,
                retrieval_score=max(chunk.score for chunk in chunks),
            )
        )
    return candidates


@dataclass(frozen=True)
class Selection:
    ranking: RankingResult
    sufficiency: Sufficiency
    kept: list[str]  # doc ids, best first

    def trace_data(self) -> dict[str, Any]:
        return {"ranking": self.ranking.trace(), "sufficiency": self.sufficiency.to_dict()}


def select_evidence(*, plan: QuestionPlan, candidates: Sequence[Candidate]) -> Selection:
    """Rank the candidates by tag relevance and judge whether they suffice."""
    ranking = rank_references(candidates, pico=plan.pico, vocabulary=plan.vocabulary)
    sufficiency = safe_score_sufficiency(anchor_count=len(plan.anchors), ranked=ranking.items)
    return Selection(ranking, sufficiency, [item.candidate.key for item in ranking.items])


def live_search_query(plan: QuestionPlan, question: str) -> str:
    """Return the PubMed query for the live search: the question's tags, MeSH-expanded, else its words."""
    pico, vocabulary = plan.pico, plan.vocabulary
    parts = []
    for code in [pico.primary_disease_tag, *pico.secondary_disease_tags[:1]]:
        if not code:
            continue
        label = f'"{vocabulary.label(code)}"[Title/Abstract]'
        mesh = vocabulary.terms[code].mesh_terms[:1] if code in vocabulary.terms else ()
        parts.append(f'({label} OR "{mesh[0]}"[MeSH Terms])' if mesh else label)
    if pico.primary_decision_tag:
        parts.append(f'"{vocabulary.label(pico.primary_decision_tag)}"[Title/Abstract]')
    if not parts:
        return " ".join(question.split()[:20])
    return " AND ".join(parts)


def live_search(
    *, plan: QuestionPlan, question: str, max_results: int, fetch: Callable[..., Any] | None = None
) -> dict[str, Any]:
    """Search PubMed live and store what it finds; return what happened, for the trace.

    After a failure (NCBI unreachable) the live search is skipped for five minutes, so an offline
    deployment answers from stored evidence without waiting on retries for every question.
    """
    from pubmed.services.ingest import fetch_and_cache

    query = live_search_query(plan, question)
    if cache.get(LIVE_SEARCH_DOWN_KEY):
        return {"ran": False, "query": query, "reason": "PubMed was unreachable a moment ago; not retried yet"}
    outcome = (fetch or fetch_and_cache)(queries=[query], max_per_query=max_results)
    if outcome.unavailable:
        cache.set(LIVE_SEARCH_DOWN_KEY, True, LIVE_SEARCH_BACKOFF_SECONDS)
    logger.info("live_pubmed_search", query=query, found=outcome.found, new=outcome.new, errors=len(outcome.errors))
    return {
        "ran": True,
        "query": query,
        "found": outcome.found,
        "new": outcome.new,
        "pmids": outcome.pmids,
        "errors": outcome.errors[:3],
    }


def order_sources(sources: Sequence[EvidenceSource], kept: Sequence[str]) -> list[EvidenceSource]:
    """Return sources in ranking order with only kept documents approved (library sources stay known)."""
    rank = {doc_id: position for position, doc_id in enumerate(kept)}
    adjusted = [
        _with_approval(source, False) if source.approved and source.doc_id not in rank else source for source in sources
    ]
    return sorted(adjusted, key=lambda s: (rank.get(s.doc_id, len(rank)), s.origin != ORIGIN_LIBRARY))


def _with_approval(source: EvidenceSource, approved: bool) -> EvidenceSource:
    return replace(source, approved=approved)
