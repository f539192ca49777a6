"""What a question about the loaded rows is about, and which rows are about it, whatever the wording.

The topic is the question's clinical concepts (`evidence.concepts`: tag synonyms, the curated
abbreviations and lay words, British / American spellings folded) once the words that only point
at the rows ("loaded", "articles", "these") and the parts already read as filters (a phase, a
status, a year) are set aside. A wording that names a tag brings the tag's synonyms and MeSH
headings with it, so "BC" (a curated abbreviation for breast cancer) also finds "breast carcinoma"
and the MeSH heading "Breast Neoplasms". A row is about the topic when its title, its abstract (a
trial: its registry summary - conditions, interventions, status, phase) or its MeSH terms cover
every concept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from evidence import language
from evidence.concepts import Concept, Lexicon, TextIndex, coverage, form_of, question_concepts
from evidence.pico import extract_pico_rules
from evidence.text import stem
from evidence.vocabulary import Vocabulary
from research.context import PageItem


def _row_stems(found: language.Words) -> frozenset[str]:
    """The stems of the words that point at the rows or at how they are asked about, never at what they are about."""
    return frozenset(stem(word) for word in found.of(language.WordClass.ROWS))


# A row addresses a question in prose when it covers at least this share of the topic's concepts.
ADDRESSES_SHARE = 0.5


@dataclass(frozen=True)
class TopicConcept:
    """One concept of the topic with the wordings a reader recognises (for saying how rows were matched)."""

    concept: Concept
    wordings: tuple[str, ...]


@dataclass(frozen=True)
class RowTopic:
    """The clinical topic a question about the rows names: every concept must be covered."""

    concepts: tuple[TopicConcept, ...]

    @property
    def label(self) -> str:
        return " and ".join(part.concept.label for part in self.concepts)

    def covered_by(self, index: TextIndex) -> bool:
        return all(index.covers(part.concept) for part in self.concepts)

    def judged(self, index: TextIndex) -> tuple[bool, float, list[Concept]]:
        """Return whether the text addresses the topic (any text, for no topic), its share and what it misses.

        The share is `evidence.concepts.coverage`, the judge's measure; enough of it addresses the topic.
        """
        share, missing = coverage([part.concept for part in self.concepts], index)
        return (not self.concepts or share >= ADDRESSES_SHARE), share, missing

    def how_matched(self) -> str:
        """Return the wordings each concept was matched by, for the answer's "how" line."""
        described = []
        for part in self.concepts:
            others = [w for w in part.wordings if w.lower() != part.concept.label.lower()]
            described.append(f'"{part.concept.label}"' + (f" ({', '.join(others)})" if others else ""))
        return " and ".join(described)


def row_index(item: PageItem) -> TextIndex:
    """Return the text a row is matched on: title, abstract or registry summary, MeSH terms."""
    return TextIndex(" . ".join([item.title or "", item.source.text or "", *item.facets.get("mesh", ())]))


def row_topic(
    question: str, *, vocabulary: Vocabulary, lexicon: Lexicon, taken: Sequence[tuple[int, int]] = ()
) -> RowTopic:
    """Return the topic of a question about the rows; `taken` spans (read as filters) are left out."""
    text = question
    for start, end in taken:
        text = text[:start] + " " * (end - start) + text[end:]
    pico = extract_pico_rules(text, vocabulary=vocabulary)
    # A tag concept is labelled as the question words it ("lung cancer", not the tag's "non-small cell lung cancer").
    written = {match.code: match.text for match in vocabulary.matches(text)}
    parts = []
    row_words = language.current().derived(_row_stems)
    for concept in question_concepts(text, vocabulary=vocabulary, pico=pico, lexicon=lexicon):
        if all(set(form) <= row_words for form in concept.forms[:1]):
            continue
        if concept.code in written and concept.label == vocabulary.label(concept.code):
            concept = replace(concept, label=written[concept.code])
        parts.append(_with_tag_wordings(concept, vocabulary=vocabulary, lexicon=lexicon))
    return RowTopic(tuple(parts))


def _with_tag_wordings(concept: Concept, *, vocabulary: Vocabulary, lexicon: Lexicon) -> TopicConcept:
    """Return the concept with the synonyms and MeSH headings of every tag one of its wordings names."""
    wordings = [concept.label]
    own = vocabulary.terms.get(concept.code) if concept.code else None
    if own is not None:
        wordings += [own.label, *own.synonyms]
    wordings += lexicon.wording.get(concept.label, ()) or lexicon.wording.get(concept.label.lower(), ())
    codes = [concept.code] if concept.code else []
    for wording in list(wordings):
        codes += [match.code for match in vocabulary.matches(wording)]
    for code in dict.fromkeys(codes):
        term = vocabulary.terms.get(code)
        if term is not None:
            wordings += [term.label, *term.synonyms, *term.mesh_terms]
    unique = tuple(dict.fromkeys(w for w in wordings if w))
    forms = tuple(dict.fromkeys([*concept.forms, *(f for w in unique for f in lexicon.expand(form_of(w)) if f)]))
    return TopicConcept(replace(concept, forms=forms), unique)
