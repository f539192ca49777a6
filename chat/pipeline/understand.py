"""Step 1, understand: the question becomes a PICO with disease and decision tags, retrieval
queries, a result context (ctDNA-positive / -negative), the studies it names, and weighted terms.

One vocabulary understands the question: the curated tag vocabulary (synonyms, MeSH), extended
with the library's own disease tags that no curated tag describes yet.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from chat.pipeline.state import AnswerRun, TraceStep, names
from chat.providers import json_completer
from evidence import language
from evidence.asks import asked_for
from evidence.concepts import TOPIC, Concept, Lexicon, question_concepts
from evidence.decomposition import decompose_question
from evidence.followup import read_turn
from evidence.models import Study
from evidence.patient import patient_details
from evidence.pico import extract_pico
from evidence.question_parts import question_parts
from evidence.selectors import library_studies
from evidence.sources import EvidenceSet, EvidenceSource
from evidence.tag_names import tag_label
from evidence.text import content_terms, is_intervention, stem, tokens
from evidence.vocabulary import DISEASE, Vocabulary, VocabularyTerm, load_vocabulary
from pubmed.selectors import shorthand_definitions, word_document_frequencies

_LINK = r"(?:[\s-]+(?:is|was|were|test|tests|result|results|status|remains|remained|became|level))*[\s-]*"
# "no ctDNA detectable" and "without detectable ctDNA" are negative results, not positive ones.
_NONE = r"(?<!\bno )(?<!\bwithout )"
_POSITIVE = re.compile(
    rf"{_NONE}\b(?:ctdna|mrd){_LINK}(?:positive|pos|detected|detectable)\b"
    rf"|{_NONE}\b(?:positive|detectable|detected)\s+(?:ctdna|mrd)\b",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    rf"\b(?:ctdna|mrd){_LINK}(?:negative|neg|undetectable|not\s+(?:detected|detectable))\b"
    r"|\b(?:negative|undetectable)\s+(?:ctdna|mrd)\b|\b(?:no|without)\s+(?:detectable\s+|detected\s+)?(?:ctdna|mrd)\b",
    re.IGNORECASE,
)

_WORD = re.compile(r"[\w-]+")


def understand(run: AnswerRun) -> TraceStep:
    """Extract the PICO, sub-queries, result context, named studies and term weights of `run.question`."""
    settings = run.settings
    # The curated word classes, read once per question (evidence.language) and before the vocabulary, which reads
    # its acronyms from them: a curator's row applies from this question on.
    language.refresh()
    run.library = library_studies()
    run.vocabulary = vocabulary = question_vocabulary(run.library)
    run.lexicon = Lexicon.load()
    read_follow_up(run)
    # "PsA" in a question about an infection; "LBP", which no curated row spells out, as the stored abstracts define it.
    library_names = [name for study in run.library for name in (study.study_name, *study.aliases) if name]
    run.lexicon, run.defined = run.lexicon.read_for(run.question, names=library_names, define=shorthand_definitions)
    lexicon = run.lexicon
    llm_json = json_completer(settings) if settings.model_pico and settings.provider != "extractive" else None
    run.pico = pico = extract_pico(
        run.question,
        vocabulary=vocabulary,
        llm_json=llm_json,
        spelled_out=lexicon.spelled_out(run.question),
        spelled_phrases=lexicon.spelled_phrases(run.question),
    )
    run.sub_queries = decompose_question(run.question, pico=pico, vocabulary=vocabulary, llm_json=llm_json)
    run.context = result_context(run.question)
    run.named = named_studies(run.question, run.library)
    run.terms = content_terms(run.question)
    run.weights = term_weights(run.question, vocabulary=vocabulary, tags=pico.disease_tags)
    run.concepts = question_concepts(
        run.question, vocabulary=vocabulary, pico=pico, lexicon=lexicon, rarity=word_rarity
    )
    # A study the question names ("What do DYNAMIC / GALAXY show?") is a source to cite, not a topic to cover.
    study_names = [name for study in run.named for name in (study.study_name, *study.aliases)]
    named_words = {word.lower() for name in study_names for word in _WORD.findall(name)}
    run.concepts = [c for c in run.concepts if not (c.role == TOPIC and c.label.lower() in named_words)]
    run.parts = question_parts(run.question, run.concepts)
    run.search_text = search_text(run.question, lexicon)
    run.asks = asked_for(run.question, lexicon, run.concepts)
    # Kidney function, episode length, stage and follow-up time, read with the shorthand spelled out ("starts HD").
    run.patient = patient_details(lexicon.spelled_inline(run.question))
    follow_up = run.follow_up
    if follow_up and follow_up.is_follow_up:
        # "and the bleeding signal?": what the follow-up adds to the question before it is what its answer is about.
        run.focus = frozenset(content_terms(follow_up.asked)) - set(content_terms(follow_up.previous))
    elif pico.outcome:
        # "apixaban for SCAF - how much extra major bleeding vs ASA?": the outcome a question names is what its answer
        # reports first (each outcome by its head word: "bleeding", not "major").
        run.focus = frozenset(content_terms(" ".join(phrase.split()[-1] for phrase in pico.outcome.split(", "))))
    if not run.asks and follow_up and follow_up.is_follow_up and not is_intervention(follow_up.asked):
        # "and if she starts HD?" asks again what was asked before; "what if we used edoxaban?" asks about edoxaban.
        run.asks = asked_for(follow_up.previous, lexicon)
    return TraceStep(
        "understand",
        "Understood the question",
        f"Disease tags: {tag_names(pico.disease_tags, vocabulary) or 'none recognised'}"
        f" (primary {tag_names([pico.primary_disease_tag], vocabulary) or '-'});"
        f" decision tags: {tag_names(pico.decision_tags, vocabulary) or 'none'}"
        f" (primary {tag_names([pico.primary_decision_tag], vocabulary) or '-'}); PICO by {pico.source}"
        + (f"; {len(run.sub_queries)} sub-queries" if len(run.sub_queries) > 1 else "")
        + (f"; result context: {run.context}" if run.context else "")
        + (
            "; shorthand read as the stored abstracts define it: "
            + ", ".join(f"{d.short} ({d.long})" for d in run.defined)
            if run.defined
            else ""
        )
        + (f"; studies named: {names(run.named, 'study_name')}" if run.named else "")
        + (
            f"; follow-up of the previous question, carried over: {', '.join(run.follow_up.carried)}"
            if run.follow_up and run.follow_up.is_follow_up
            else ""
        ),
        {
            "follow_up": run.follow_up.to_dict() if run.follow_up and run.follow_up.is_follow_up else None,
            "tags": pico.disease_tags,
            "context": run.context,
            "defined_shorthand": [{"short": d.short, "long": d.long, "abstracts": d.abstracts} for d in run.defined],
            "named_studies": [study.study_name for study in run.named],
            "terms": run.terms,
            "concepts": [concept.to_dict() for concept in run.concepts],
            "pico": pico.to_dict(),
            "sub_queries": [query.to_dict() for query in run.sub_queries],
        },
    )


def tag_names(codes: Sequence[str | None], vocabulary: Vocabulary) -> str:
    """Return the tags' labels joined by commas: the trace is read by clinicians, not by the code."""
    # Library-only tags carry their code as label ("sglt2 inhibitors"): those are humanized instead.
    labels = {code: term.label for code, term in vocabulary.terms.items() if term.label != code.replace("_", " ")}
    # Two tags may carry one label ("cap" and "community_acquired_pneumonia"): each label is named once.
    return ", ".join(dict.fromkeys(tag_label(code, labels) for code in codes if code))


def read_follow_up(run: AnswerRun) -> None:
    """Read the question with the conversation's earlier questions; a follow-up gets their topic."""
    assert run.vocabulary is not None
    vocabulary, lexicon = run.vocabulary, run.lexicon
    earlier = [turn["content"] for turn in run.history if turn.get("role") == "user"]

    def concepts_of(text: str) -> list[Concept]:
        # Read with its shorthand spelled out, as the question itself is ("on ASA 81" names aspirin).
        pico = extract_pico(text, vocabulary=vocabulary, spelled_out=lexicon.spelled_out(text),
                            spelled_phrases=lexicon.spelled_phrases(text))
        return question_concepts(text, vocabulary=vocabulary, pico=pico, lexicon=lexicon)

    run.follow_up = read_turn(run.question, earlier, concepts_of=concepts_of)
    run.question = run.follow_up.question


def question_vocabulary(library: list[Study]) -> Vocabulary:
    """Return the curated vocabulary plus a plain term for each library disease tag it lacks."""
    vocabulary = load_vocabulary()
    missing = {
        tag.lower(): tag for study in library for tag in study.disease_tags if tag.lower() not in vocabulary.terms
    }
    if not missing:
        return vocabulary
    extra = [
        VocabularyTerm(
            code=code,
            kind=DISEASE,
            label=original.replace("_", " "),
            synonyms=(),
            mesh_terms=(),
            broader=None,
            is_imaging_term=False,
        )
        for code, original in missing.items()
    ]
    return Vocabulary.from_terms([*vocabulary.terms.values(), *extra])


def result_context(question: str) -> str | None:
    """Return "positive" or "negative" when the question is about a positive or negative ctDNA/MRD result."""
    positive, negative = bool(_POSITIVE.search(question)), bool(_NEGATIVE.search(question))
    if positive != negative:
        return "positive" if positive else "negative"
    return None


def named_studies(question: str, library: list[Study]) -> list[Study]:
    """Return the library studies the question names (by study name or alias), in library order."""
    sources = [EvidenceSource.from_study(study) for study in library]
    by_doc = {source.doc_id: study for source, study in zip(sources, library, strict=True)}
    evidence = EvidenceSet(library=sources)
    named: list[Study] = []
    for pattern, doc_id in evidence.name_patterns():
        if pattern.search(question) and by_doc[doc_id] not in named:
            named.append(by_doc[doc_id])
    return named


def term_weights(question: str, *, vocabulary: Vocabulary, tags: list[str]) -> dict[str, float]:
    """Weigh the question's terms by rarity in the abstract store (IDF); words naming its disease tags count double.

    Common words ("children", "treatment") then cannot make an off-topic abstract look relevant.
    """
    terms = content_terms(question)
    surface: dict[str, str] = {}
    for token in tokens(question):
        surface.setdefault(stem(token), token)
    frequencies, total = word_document_frequencies([surface.get(term, term) for term in terms])
    weights = {term: math.log((total + 1) / (frequencies.get(surface.get(term, term), 0) + 1)) + 0.1 for term in terms}
    tag_words = {
        stem(word)
        for code in tags
        if code in vocabulary.terms
        for phrase in (vocabulary.terms[code].label, code.replace("_", " "), *vocabulary.terms[code].synonyms)
        for word in tokens(phrase)
    }
    for term in weights:
        if term in tag_words:
            weights[term] *= 2.0
    return weights


def word_rarity(words: Sequence[str]) -> dict[str, float]:
    """Return each word's rarity in the abstract store (IDF; 1.0 for every word while the store is empty)."""
    frequencies, total = word_document_frequencies(list(words))
    if not total:
        return {word: 1.0 for word in words}
    return {word: math.log((total + 1) / (frequencies.get(word, 0) + 1)) + 0.1 for word in words}


def search_text(question: str, lexicon: Lexicon) -> str:
    """Return the question with what its abbreviations and lay words stand for, for searching and judging."""
    extra = lexicon.spelled_out(question)
    return question if not extra else f"{question} ({'; '.join(extra[:6])})"
