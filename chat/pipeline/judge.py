"""Steps 4-5, judge and rank: decide which candidates address the question - its condition and its
decision, whatever the wording - rank the admitted ones, and judge whether they suffice.

A candidate is admitted when it covers the question's primary condition (a secondary condition
alone makes it context, never the answer), covers the question's main decision or intervention
term, and its semantic similarity to the question blended with its concept coverage reaches a
threshold calibrated on PubMedQA (`benchmarks/answerability.py --calibrate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from chat.pipeline.state import AnswerRun, Judgement, TraceStep, plural
from evidence.asks import answers
from evidence.concepts import CONDITION, DECISION_ROLE, POPULATION, Concept, TextIndex, coverage
from evidence.findings import decisions_tagged
from evidence.models import Study, StudyKind
from evidence.pico import Pico
from evidence.ranking import Candidate, rank_references
from evidence.sources import ORIGIN_LIBRARY, EvidenceSet, EvidenceSource
from evidence.sufficiency import safe_score_sufficiency
from evidence.vocabulary import DECISION, DISEASE
from pubmed.embeddings import embed_cached
from pubmed.selectors import chunk_similarities, mesh_terms_by_pmid

REVIEW_TYPES = frozenset({"review", "systematic review", "meta-analysis", "practice guideline", "guideline",
                          "consensus development conference"})
SYNTHESIS_TYPES = frozenset({"systematic review", "meta-analysis", "practice guideline", "guideline"})
LIBRARY_REVIEW_KINDS = frozenset({"guideline", "meta-analysis", "systematic-review"})


def is_synthesis(publication_types: Sequence[str]) -> bool:
    """Return True for a systematic review, meta-analysis or guideline (by PubMed publication type)."""
    return bool({kind.lower() for kind in publication_types} & SYNTHESIS_TYPES)


def judge_evidence(run: AnswerRun) -> TraceStep:
    """Judge every candidate, rank the admitted ones and decide whether a live search is needed."""
    run.judgements = judgements = {j.doc_id: j for j in _judge_all(run)}
    admitted = {doc_id for doc_id, judgement in judgements.items() if judgement.addresses}
    ranking = rank_references(candidates(run, admitted), pico=run.require_pico(), vocabulary=run.vocabulary)
    run.ranking = ranking
    direct = [judgement for judgement in judgements.values() if judgement.direct]
    run.sufficiency = verdict = safe_score_sufficiency(
        anchor_count=sum(1 for study in run.anchors if EvidenceSource.from_study(study).doc_id in admitted),
        ranked=ranking.items,
        direct_sources=len(direct),
        direct_syntheses=sum(1 for judgement in direct if judgement.synthesis),
        direct_needed=run.settings.live_search_direct_sources,
        unaddressed=run.unaddressed(admitted),
    )
    run.kept = [item.candidate.key for item in ranking.items]
    rejected = [j for j in judgements.values() if not j.addresses]
    return TraceStep(
        "judge",
        "Judged which evidence addresses the question",
        f"{plural(len(admitted), 'source addresses', 'sources address')} the question"
        + (f"; set aside: {'; '.join(f'{j.title[:60]} ({j.reason})' for j in rejected[:4])}" if rejected else "")
        + f". Sufficiency {verdict.score}/100 ({verdict.level}); live search: {verdict.external_search_reason}.",
        {
            "concepts": [concept.to_dict() for concept in run.concepts],
            "judgements": [j.to_dict() for j in judgements.values()],
            "sufficiency": verdict.to_dict(),
        },
    )


def needs_live_search(run: AnswerRun) -> bool:
    """Return True when the evidence does not suffice and the live PubMed search is enabled.

    The rule is `evidence.sufficiency`'s: a question that anchor studies, tagged evidence or enough
    directly-addressing stored sources answer never spends a request of the shared NCBI budget.
    """
    return bool(run.sufficiency and run.sufficiency.external_search and run.settings.live_search)


def _flag_other_populations(run: AnswerRun) -> None:
    """Mark the curated findings of the library sources about a sibling population of the question's, or a narrower one.

    The conditions compared are the primary one and any the question names with its broader condition
    ("heart failure ... HFpEF"); a procedure (PCI) is filed under no disease, so a finding on ACS is no other
    population for a stent question, while one on ACS is for a patient with chronic coronary syndrome.
    """
    pico = run.require_pico()
    vocabulary, asked = run.vocabulary, set(pico.disease_tags)
    if vocabulary is None or not asked:
        return
    subjects = {pico.primary_disease_tag or ""} | {
        code for code in asked if next(iter(vocabulary.broader_chain(code)), None) in asked
    }
    subjects.discard("")
    flagged = []
    for source, study in run.library_sources:
        if source.findings:
            findings = tuple(
                replace(f, other_population=vocabulary.about_sibling(f.shown, subjects, asked),
                        narrower_population=vocabulary.about_narrower(f.shown, subjects, asked))
                for f in source.findings
            )
            source = replace(source, findings=findings)
        flagged.append((source, study))
    run.library_sources = flagged


def _question_vectors(run: AnswerRun) -> list[np.ndarray]:
    """Return the question's vector, and for a long question also its clinical question's (judged by parts)."""
    core = run.parts.clinical_question
    return list(embed_cached([run.search_text or run.question, *([core] if core else [])]))


def _judge_all(run: AnswerRun) -> list[Judgement]:
    _flag_other_populations(run)
    question_vectors = _question_vectors(run)
    studies = [study for _, study in run.library_sources]
    library_texts = [f"{study.title}. {study.key_finding}" for study in studies]
    library_vectors = embed_cached(library_texts) if studies else np.zeros((0, 1))
    anchors, named = {study.pk for study in run.anchors}, {study.pk for study in run.named}
    found = []
    for (source, study), vector in zip(run.library_sources, library_vectors, strict=True):
        # What the study covers: its names, title, curated findings and key finding (the source's citable text).
        text = " ".join([study.study_name, *study.aliases, study.title, source.text])
        # Judged by its best passage, as an abstract is by its best chunk: the description, or the curated
        # finding closest to the question ("apixaban in dialysis" is one row of a guideline's findings).
        passages = [vector, *(embed_cached([f.shown for f in source.findings]) if source.findings else [])]
        found.append(
            _judgement(
                run,
                source=source,
                text=text,
                semantic=max(float(np.dot(vector, passage)) for vector in question_vectors for passage in passages),
                tags=[tag.lower() for tag in study.disease_tags],
                decision_tags=[tag.lower() for tag in study.decision_tags],
                synthesis=study.kind in LIBRARY_REVIEW_KINDS,
                anchor=study.pk in anchors,
                named=study.pk in named,
            )
        )
    by_doc: dict[str, list[EvidenceSource]] = {}
    for chunk in run.retrieved:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    pmids = [chunks[0].pmid for chunks in by_doc.values()]
    similarities = [chunk_similarities(vector=vector, pmids=pmids) for vector in question_vectors]
    for chunks in by_doc.values():
        first = chunks[0]
        scores = [similarity for found in similarities for _, similarity in found.get(first.pmid, [])] or [0.0]
        found.append(
            _judgement(
                run,
                source=first,
                text=" ".join([first.title, *(chunk.text for chunk in chunks)]),
                semantic=max(scores),
                tags=[],
                synthesis=is_synthesis(first.publication_types),
                anchor=False,
            )
        )
    return found


def judge_tool_sources(run: AnswerRun) -> None:
    """Judge, by the same rules, the documents the model found with its tools and the verified answer cites
    (added to `run.judgements`, which the confidence rating reads)."""
    assert run.evidence is not None and run.verified is not None
    pending = [doc_id for doc_id in dict.fromkeys(run.verified.cited_doc_ids) if doc_id not in run.judgements]
    sources = [chunks[0] for doc_id in pending if (chunks := run.evidence.chunks(doc_id))]
    if not sources:
        return
    texts = [" ".join([source.title, *(c.text for c in run.evidence.chunks(source.doc_id))]) for source in sources]
    question_vectors = _question_vectors(run)
    for source, text, vector in zip(sources, texts, embed_cached(texts), strict=True):
        run.judgements[source.doc_id] = _judgement(
            run,
            source=source,
            text=text,
            semantic=max(float(np.dot(question, vector)) for question in question_vectors),
            tags=[],
            synthesis=is_synthesis(source.publication_types),
            anchor=False,
        )


def _judgement(
    run: AnswerRun,
    *,
    source: EvidenceSource,
    text: str,
    semantic: float,
    tags: Sequence[str],
    synthesis: bool,
    anchor: bool,
    decision_tags: Sequence[str] = (),
    named: bool = False,
) -> Judgement:
    """Return the judgement of one candidate from its text, its similarity and (library) its tags."""
    settings, pico, vocabulary = run.settings, run.require_pico(), run.vocabulary
    assert vocabulary is not None
    index = TextIndex(text)
    share, missing = coverage(run.concepts, index)
    # A decision that asks for a kind of answer is addressed by a source that states one about the question's
    # own decision ("How long DAPT ...?" by "single antiplatelet therapy after 1 month of DAPT").
    stated = [c for c in missing if c.role == DECISION_ROLE and _states_its_answer(c, text, run.concepts)]
    if stated:
        missing = [c for c in missing if c not in stated]
        total = sum(c.weight for c in run.concepts)
        share = round(1 - sum(c.weight for c in missing) / total, 4) if total else share
    conditions = [c for c in run.concepts if c.role == CONDITION]
    primary_label = vocabulary.label(pico.primary_disease_tag) if pico.primary_disease_tag else ""
    primary = next((c for c in conditions if c.label == primary_label), conditions[0] if conditions else None)
    condition_ok = primary is None or index.covers(primary) or (pico.primary_disease_tag or "") in tags
    # A library row is chosen by its tags, which can share only a side condition with the question (CKD for a
    # metformin question): it must also address the question's decision, in its text or its decision tags.
    decisions = [c for c in run.concepts if c.role == DECISION_ROLE]
    decision_ok = (
        not decisions
        or source.origin != ORIGIN_LIBRARY
        or any(index.covers(c) or c in stated for c in decisions)
        or bool(set(pico.decision_tags) & set(decision_tags))
    )
    key = key_concept(run.concepts)
    measure = ""  # the numbers behind the reason, for the trace's developer line
    weight = settings.judge_semantic_weight
    score = round(weight * semantic + (1 - weight) * share, 4)
    # A library row whose text covers all of the question but conditions its curators tagged it with (the HF
    # guideline, tagged CKD, for "dapagliflozin with eGFR 25 in HFrEF?") reaches the bar as if it covered them.
    tagged = bool(missing) and all(c.role == CONDITION and c.code and c.code in tags for c in missing)
    bar = round(weight * semantic + (1 - weight) * 1.0, 4) if tagged else score
    if not condition_ok:
        others = [c.label for c in conditions if c is not primary and index.covers(c)]
        reason = (
            f"matches only {', '.join(others)}: context, not the answer"
            if others
            else f"does not address {primary.label if primary else 'the condition'}"
        )
        addresses = False
    elif not decision_ok:
        addresses, reason = False, f"does not address {_join([c.label for c in decisions])}"
    elif source.origin != ORIGIN_LIBRARY and not named and (other := [c.label for c in missing if c.role == CONDITION]):
        addresses, reason = False, f"does not address {_join(other)}"  # a stored abstract: every condition named
    elif anchor:
        addresses, reason = True, "anchor study for this scenario"
    elif named:
        addresses, reason = True, "named in the question"
    elif bar < settings.judge_threshold:
        addresses, reason = False, "too far from the question"
        measure = f"score {bar:.2f} < {settings.judge_threshold:.2f}"
    elif semantic < settings.judge_min_semantic and not _curated_for(pico, tags, decision_tags):
        addresses, reason = False, "shares the question's words but not its meaning"
        measure = f"similarity {semantic:.2f} < {settings.judge_min_semantic:.2f}"
    else:
        addresses, reason = True, "addresses the question"
        measure = f"score {score:.2f}" + (f", {bar:.2f} with its tags" if tagged else "")
    # Directly addressing the question means its primary condition and its decision (or main topic).
    essential = [c for c in [primary, key] if c is not None]
    essential += [c for c in run.concepts if c.role == DECISION_ROLE and c not in essential]
    by_findings = decisions_tagged(source.findings)  # addressed by the source's findings, in whatever words
    unmet = [c.label for c in missing if c in essential and not (c.role == DECISION_ROLE and c.code in by_findings)]
    return Judgement(
        doc_id=source.doc_id,
        title=source.study_name or source.title,
        origin=source.origin,
        semantic=round(semantic, 4),
        coverage=share,
        score=score,
        addresses=addresses,
        direct=addresses
        and not unmet
        and source.kind != StudyKind.PROTOCOL  # a protocol reports no outcome: cited, never counted as answering
        and (
            anchor
            or (
                score >= settings.judge_direct_threshold
                and (source.origin == ORIGIN_LIBRARY or semantic >= settings.judge_direct_semantic)
            )
        ),
        synthesis=synthesis,
        missing=[c.label for c in missing],
        gaps=unmet,
        reason=f"{reason} ({measure})" if measure else reason,
        why=reason,
    )


def _curated_for(pico: Pico, tags: Sequence[str], decision_tags: Sequence[str]) -> bool:
    """A library study curated for every condition and a decision of the question shares its meaning, not just
    its words (KDIGO 2018 on anticoagulation in AF on dialysis reads far, in embeddings, from "dabigatran ... HD")."""
    conditions = set(pico.condition_tags)
    return bool(tags) and conditions <= set(tags) and bool(set(pico.decision_tags) & set(decision_tags))


def _states_its_answer(decision: Concept, text: str, concepts: Sequence[Concept]) -> bool:
    return bool(decision.answer_kind) and answers(decision.answer_kind, text, concepts)


def key_concept(concepts: Sequence[Concept]) -> Concept | None:
    """Return the concept a source must mention: the decision, else the rarest topic word."""
    decisions = [c for c in concepts if c.role == DECISION_ROLE]
    if decisions:
        return decisions[0]
    topics = [c for c in concepts if c.role not in (CONDITION, POPULATION)]
    return max(topics, key=lambda c: c.weight) if topics else None


def admit(run: AnswerRun) -> TraceStep:
    """Admit the ranked evidence: kept documents in ranking order, the whole library known for verification."""
    ranking = run.ranking
    assert ranking is not None
    ordered = order_sources([*(source for source, _ in run.library_sources), *run.retrieved], run.kept)
    run.evidence = EvidenceSet(
        ordered, library=[EvidenceSource.from_study(study, approved=False) for study in run.library]
    )
    return TraceStep(
        "rank",
        "Ranked the evidence by tag relevance",
        f"{len(ranking.items)} kept, {len(ranking.excluded)} excluded (tag relevance < 10)"
        + ("; relaxed with broader reviews" if ranking.relaxed else ""),
        ranking.trace(),
    )


def candidates(run: AnswerRun, admitted: set[str]) -> list[Candidate]:
    """Return one ranking candidate per admitted document: library studies by their tags, abstracts by text + MeSH.

    The judgement score breaks ties between studies with the same tags: "empagliflozin" puts
    EMPEROR-Preserved before DELIVER.
    """
    anchors = {study.pk for study in run.anchors}
    found = [
        _library_candidate(run, source, study, is_anchor=study.pk in anchors)
        for source, study in run.library_sources
        if source.doc_id in admitted
    ]
    by_doc: dict[str, list[EvidenceSource]] = {}
    for source in run.retrieved:
        if source.doc_id in admitted:
            by_doc.setdefault(source.doc_id, []).append(source)
    mesh = mesh_terms_by_pmid(pmids=[chunks[0].pmid for chunks in by_doc.values()])
    vocabulary = run.vocabulary
    assert vocabulary is not None
    for doc_id, chunks in by_doc.items():
        first = chunks[0]
        text = " ".join([first.title, *(chunk.text for chunk in chunks)])
        terms = mesh.get(first.pmid, [])
        is_review = bool({value.lower() for value in first.publication_types} & REVIEW_TYPES)
        # The judge found the question's concepts in the abstract by any of their wordings ("PE" for
        # pulmonary embolism); the tag ranking must not then exclude it for lacking the tag's own words.
        missing = set(run.judgements[doc_id].missing)
        covered = {c.code: c.role for c in run.concepts if c.code and c.label not in missing}
        found.append(
            Candidate(
                key=doc_id,
                title=first.title,
                disease_tags=frozenset(vocabulary.tags_in(text, DISEASE))
                | vocabulary.tags_for_mesh(terms, DISEASE)
                | {code for code, role in covered.items() if role == CONDITION},
                decision_tags=frozenset(vocabulary.tags_in(text, DECISION))
                | vocabulary.tags_for_mesh(terms, DECISION)
                | {code for code, role in covered.items() if role == DECISION_ROLE},
                is_primary_study=not is_review,
                is_review=is_review,
                source="pubmed",
                year=first.year,
                retrieval_score=run.judgements[doc_id].score,
                level_rank=first.level.rank if first.level else 0,
            )
        )
    return found


def _library_candidate(run: AnswerRun, source: EvidenceSource, study: Study, *, is_anchor: bool) -> Candidate:
    return Candidate(
        key=source.doc_id,
        title=study.study_name,
        disease_tags=frozenset(tag.lower() for tag in study.disease_tags),
        decision_tags=frozenset(tag.lower() for tag in study.decision_tags),
        is_primary_study=study.kind in {"trial", "cohort"},
        is_review=study.kind in LIBRARY_REVIEW_KINDS,
        source="library",
        year=study.publication_year,
        retrieval_score=1.0 + run.judgements[source.doc_id].score,
        strength=study.evidence_strength,
        is_anchor=is_anchor,
        level_rank=source.level.rank if source.level else 0,
        is_named=study in run.named,
    )


def order_sources(sources: Sequence[EvidenceSource], kept: Sequence[str]) -> list[EvidenceSource]:
    """Return sources in ranking order, approved exactly when their document was kept."""
    rank = {doc_id: position for position, doc_id in enumerate(kept)}
    adjusted = [source.with_approval(source.doc_id in rank) for source in sources]
    return sorted(adjusted, key=lambda s: (rank.get(s.doc_id, len(rank)), s.origin != ORIGIN_LIBRARY))


def _join(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " or " + labels[-1]
