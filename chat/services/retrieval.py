"""Evidence for one question: matching library studies (VERIFIED REFERENCES) and stored abstracts."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from chat.answer_settings import AnswerSettings
from chat.services.text import content_terms, stem, stems, tokens
from chat.services.understanding import TagVocabulary, build_vocabulary, question_disease_tags, result_context
from evidence import selectors as evidence_selectors
from evidence.citations import ORIGIN_LIBRARY, ORIGIN_RETRIEVED, EvidenceSet, EvidenceSource, doc_id_for
from evidence.models import Study

# A library study is kept when its tag score reaches this share of the best study's score, so a
# colon-cancer question does not pull in breast-cancer studies that share only the "ctdna" tag.
LIBRARY_RELATIVE_SCORE = 0.5
LIBRARY_KEY_FINDING_CHUNK = "key_finding"


@dataclass
class LibraryMatch:
    """Library studies for a question and how they were chosen."""

    tags: list[str]
    context: str | None
    named: list[Study]
    studies: list[Study]
    intent: str
    scores: dict[str, float] = field(default_factory=dict)
    wording: dict[str, float] = field(default_factory=dict)


def study_source(study: Study, *, approved: bool = True, score: float = 0.0) -> EvidenceSource:
    """Return a library study as an evidence source whose text is its key finding."""
    return EvidenceSource(
        doc_id=doc_id_for(pmid=study.pmid, doi=study.doi, nct=study.nct_number),
        chunk_id=LIBRARY_KEY_FINDING_CHUNK,
        origin=ORIGIN_LIBRARY,
        title=study.title,
        text=study.key_finding,
        pmid=study.pmid,
        doi=study.doi,
        nct=study.nct_number,
        pmcid=study.pmcid,
        authors_short=study.authors_short,
        journal=study.journal,
        year=study.publication_year,
        url=study.url,
        kind=study.kind,
        strength=study.strength_label,
        study_name=study.study_name,
        names=tuple(study.aliases),
        score=score,
        approved=approved,
        anchor=bool(study.anchor_scenarios),
        citation_count=study.citation_count,
    )


def library_studies() -> list[Study]:
    """Return every library study (names and aliases for named-study detection, identifiers for verification)."""
    return list(Study.objects.all())


def _named_in(question: str, studies: Sequence[Study]) -> list[Study]:
    evidence = EvidenceSet(library=[study_source(study) for study in studies])
    by_doc = {study_source(study).doc_id: study for study in studies}
    named = []
    for pattern, doc_id in evidence.name_patterns():
        if pattern.search(question) and by_doc[doc_id] not in named:
            named.append(by_doc[doc_id])
    return named


def library_match(
    *,
    question: str,
    studies: Sequence[Study],
    limit: int,
    vocabulary: TagVocabulary | None = None,
    extra_tags: Sequence[str] = (),
) -> LibraryMatch:
    """Return the library studies for `question`: those it names, then the best tag matches.

    `extra_tags` (the PICO's disease tags) join the tags found from the library's own wording.
    """
    vocabulary = vocabulary or build_vocabulary(studies)
    tags = question_disease_tags(question=question, vocabulary=vocabulary)
    tags += [tag for tag in extra_tags if tag not in tags]
    context = result_context(question=question)
    named = _named_in(question, studies)
    candidates = (
        evidence_selectors.studies_for_tags(tags=tags, context=context, limit=max(limit * 4, 20)) if tags else []
    )
    wanted = set(tags)
    scores = {
        study.study_name: sum(
            vocabulary.weights.get(tag.lower(), 0.0) for tag in study.disease_tags if tag.lower() in wanted
        )
        for study in candidates
    }
    best = max(scores.values(), default=0.0)
    # Among studies matching the same tags, those whose own words answer the question come first
    # ("empagliflozin" picks EMPEROR-Preserved over the HF guideline).
    terms = content_terms(question)
    wording = {
        study.study_name: relevance(
            question_terms=terms, text=" ".join([study.study_name, study.title, study.key_finding, *study.aliases])
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
    chosen = [*named, *[study for study in ranked if study not in named]][:limit] if limit else []
    # The intent is the anchor scenario most common among the best-scoring studies.
    top = [study for study in chosen if scores.get(study.study_name, 0.0) >= best] or chosen
    anchors = [anchor for study in top for anchor in study.anchor_scenarios]
    intent = (
        min(set(anchors), key=lambda anchor: (-anchors.count(anchor), anchor))
        if anchors
        else (tags[0] if tags else "general")
    )
    return LibraryMatch(
        tags=tags, context=context, named=named, studies=chosen, intent=intent, scores=scores, wording=wording
    )


def relevance(*, question_terms: Sequence[str], text: str, weights: dict[str, float] | None = None) -> float:
    """Return the weighted share of the question's content terms that occur in `text` (0-1)."""
    if not question_terms:
        return 0.0
    weights = weights or {}
    present = stems(text)
    total = sum(weights.get(term, 1.0) for term in question_terms)
    found = sum(weights.get(term, 1.0) for term in question_terms if term in present)
    return round(found / total, 3) if total else 0.0


def term_weights(*, question: str, vocabulary: TagVocabulary, tags: Iterable[str]) -> dict[str, float]:
    """Weigh the question's terms by rarity in the abstract store (IDF); disease-tag words count double.

    Common words ("children", "treatment") then cannot make an off-topic abstract look relevant:
    a chunk has to contain the question's distinctive words to reach `min_relevance`.
    """
    terms = content_terms(question)
    surface = {}
    for token in tokens(question):
        surface.setdefault(stem(token), token)
    from pubmed.selectors import word_document_frequencies

    frequencies, total = word_document_frequencies([surface.get(term, term) for term in terms])
    weights = {term: math.log((total + 1) / (frequencies.get(surface.get(term, term), 0) + 1)) + 0.1 for term in terms}
    for tag in tags:
        for form in vocabulary.forms.get(tag, ()):
            for term in form:
                if term in weights:
                    weights[term] *= 2.0
    return weights


def abstract_sources(
    *,
    question: str,
    settings: AnswerSettings,
    question_terms: Sequence[str],
    weights: dict[str, float],
    queries: Sequence[str] = (),
    mesh_exclude: Sequence[str] = (),
) -> list[EvidenceSource]:
    """Return stored-abstract chunks for `question` from hybrid search, approved when relevant enough.

    Each of `queries` (the sub-queries of a long question; default the question itself) is
    searched with the classification's MeSH exclusions; an abstract found by several keeps its
    best hit. Search returns each abstract's best chunk; for approved abstracts the other chunks
    follow it, since results and conclusions often sit in a later chunk than the one that matched.
    """
    from pubmed.models import AbstractChunk
    from pubmed.services.search import hybrid_search

    if not AbstractChunk.objects.exists():
        return []  # nothing stored yet: no need to load the embedding model for an empty search
    best: dict[str, Any] = {}
    for query in queries or [question]:
        for hit in hybrid_search(
            query=query, k=settings.retrieval_k, mesh_exclude=mesh_exclude, rerank=settings.rerank
        ):
            if hit.pmid not in best or hit.score > best[hit.pmid].score:
                best[hit.pmid] = hit
    hits = sorted(best.values(), key=lambda hit: hit.score, reverse=True)
    scored = []
    for hit in hits:
        score = relevance(question_terms=question_terms, text=f"{hit.title}\n{hit.text}", weights=weights)
        scored.append((hit, score))
    approved_pmids = [hit.pmid for hit, score in scored if score >= settings.min_relevance]
    siblings: dict[str, list[AbstractChunk]] = {}
    for chunk in AbstractChunk.objects.filter(abstract_id__in=approved_pmids).only(
        "abstract_id", "ordinal", "section", "text"
    ):
        siblings.setdefault(chunk.abstract_id, []).append(chunk)
    sources = []
    for hit, score in scored:
        approved = score >= settings.min_relevance
        base = EvidenceSource(
            doc_id=hit.doc_id or doc_id_for(pmid=hit.pmid),
            chunk_id=str(hit.chunk_id),
            origin=ORIGIN_RETRIEVED,
            title=hit.title,
            text=hit.text,
            pmid=hit.pmid,
            doi=hit.doi or "",
            pmcid=hit.pmcid or "",
            authors=tuple(hit.authors or ()),
            journal=hit.journal or "",
            year=hit.year,
            publication_types=tuple(hit.publication_types or ()),
            score=score,
            approved=approved,
            section=hit.section or "",
        )
        sources.append(base)
        for chunk in sorted(siblings.get(hit.pmid, []), key=lambda item: item.ordinal):
            if chunk.chunk_id != base.chunk_id:
                sources.append(replace(base, chunk_id=chunk.chunk_id, text=chunk.text, section=chunk.section))
    return sources
