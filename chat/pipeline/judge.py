"""Steps 4-5, judge and rank: which candidates address the question, whether they suffice (else a
live search runs), and the order in which the admitted evidence is offered to the writer."""

from __future__ import annotations

from collections.abc import Sequence

from chat.pipeline.sources import study_source, with_approval
from chat.pipeline.state import AnswerRun, TraceStep
from evidence.citations import ORIGIN_LIBRARY, EvidenceSet, EvidenceSource
from evidence.ranking import Candidate, rank_references
from evidence.sufficiency import safe_score_sufficiency
from evidence.vocabulary import DECISION, DISEASE
from pubmed.models import Abstract

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


def judge_sufficiency(run: AnswerRun) -> TraceStep:
    """Rank the candidates by tag relevance and judge whether they suffice without a live search."""
    ranking = rank_references(candidates(run), pico=run.require_pico(), vocabulary=run.vocabulary)
    run.ranking = ranking
    run.sufficiency = verdict = safe_score_sufficiency(anchor_count=len(run.anchors), ranked=ranking.items)
    run.kept = [item.candidate.key for item in ranking.items]
    return TraceStep(
        "sufficiency",
        "Judged whether the evidence suffices",
        f"{verdict.score}/100 ({verdict.level}): {verdict.reasoning}. Live search: {verdict.external_search_reason}.",
        verdict.to_dict(),
    )


def needs_live_search(run: AnswerRun) -> bool:
    """Return True when the evidence does not suffice and the live PubMed search is enabled."""
    return bool(run.sufficiency and run.sufficiency.external_search and run.settings.live_search)


def admit(run: AnswerRun) -> TraceStep:
    """Admit the ranked evidence: kept documents in ranking order, the whole library known for verification."""
    ranking = run.ranking
    assert ranking is not None
    ordered = order_sources([*(source for source, _ in run.library_sources), *run.retrieved], run.kept)
    run.evidence = EvidenceSet(ordered, library=[study_source(study, approved=False) for study in run.library])
    return TraceStep(
        "rank",
        "Ranked the evidence by tag relevance",
        f"{len(ranking.items)} kept, {len(ranking.excluded)} excluded (tag relevance < 10)"
        + ("; relaxed with broader reviews" if ranking.relaxed else ""),
        ranking.trace(),
    )


def candidates(run: AnswerRun) -> list[Candidate]:
    """Return one ranking candidate per document: library studies by their tags, abstracts by text + MeSH.

    The library's wording score (share of the question's words in the study's own text) breaks
    ties between studies with the same tags: "empagliflozin" puts EMPEROR-Preserved before DELIVER.
    """
    anchors = {study.pk for study in run.anchors}
    found = [
        Candidate(
            key=source.doc_id,
            title=study.study_name,
            disease_tags=frozenset(tag.lower() for tag in study.disease_tags),
            decision_tags=frozenset(tag.lower() for tag in study.decision_tags),
            is_primary_study=study.kind in {"trial", "cohort"},
            is_review=study.kind in LIBRARY_REVIEW_KINDS,
            source="library",
            year=study.publication_year,
            retrieval_score=1.0 + run.wording.get(study.study_name, 0.0) + 0.01 * source.score,
            strength=study.evidence_strength,
            is_anchor=study.pk in anchors,
        )
        for source, study in run.library_sources
    ]
    by_doc: dict[str, list[EvidenceSource]] = {}
    for source in run.retrieved:
        if source.approved:
            by_doc.setdefault(source.doc_id, []).append(source)
    mesh = dict(
        Abstract.objects.filter(pmid__in=[chunks[0].pmid for chunks in by_doc.values() if chunks[0].pmid]).values_list(
            "pmid", "mesh_terms"
        )
    )
    vocabulary = run.vocabulary
    assert vocabulary is not None
    for doc_id, chunks in by_doc.items():
        first = chunks[0]
        text = " ".join([first.title, *(chunk.text for chunk in chunks)])
        terms = mesh.get(first.pmid, [])
        is_review = bool({value.lower() for value in first.publication_types} & REVIEW_TYPES)
        found.append(
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
    return found


def order_sources(sources: Sequence[EvidenceSource], kept: Sequence[str]) -> list[EvidenceSource]:
    """Return sources in ranking order with only kept documents approved (library sources stay known)."""
    rank = {doc_id: position for position, doc_id in enumerate(kept)}
    adjusted = [
        with_approval(source, False) if source.approved and source.doc_id not in rank else source for source in sources
    ]
    return sorted(adjusted, key=lambda s: (rank.get(s.doc_id, len(rank)), s.origin != ORIGIN_LIBRARY))
