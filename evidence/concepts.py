"""A question's clinical concepts, and whether a source's text covers them, whatever the wording.

A concept is one thing the question asks about - its condition ("AF"), its decision or
intervention ("anticoagulation", "metformin"), its population ("elderly") or another topic word -
with every form that expresses it: the tag vocabulary's synonyms, the curated abbreviations and
lay words ("NAC" → N-acetylcysteine, "elderly" → aged / geriatric), and British / American
spellings folded together. A text covers a concept when any form occurs in it as a whole-word
sequence of stems, so "LTOT" in a question is found in an abstract about long-term oxygen therapy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from evidence import care_settings, durations, language, stages
from evidence.absent_features import absent_spans
from evidence.case_questions import CASE_WORDS, asked_conditions, asked_decisions, case_asking
from evidence.lexicon import Lexicon
from evidence.matching import TextIndex, fold, form_of
from evidence.pico import Pico, describes_patients, measurement_spans, regimen_spans
from evidence.text import is_disease, is_intervention, stem, tokens
from evidence.vocabulary import DECISION, DISEASE, Vocabulary, is_negated

__all__ = [
    "Concept",
    "Lexicon",
    "TextIndex",
    "coverage",
    "fold",
    "form_of",
    "joined_phrases",
    "question_concepts",
]

CONDITION, DECISION_ROLE, POPULATION, TOPIC = "condition", "decision", "population", "topic"

# The words a question is asked with: none of them is its topic.
QUESTION_WORDS = (*language.NOT_TOPIC, language.WordClass.ASKING.value)


def _question_stems(found: language.Words) -> frozenset[str]:
    return frozenset(stem(word) for word in found.of(*QUESTION_WORDS))


_TIME_OF = re.compile(r"(?:after|before|following|post|pre)\b", re.IGNORECASE)  # "post-op": when, not what
_AGE = re.compile(
    r"\b(?:(?:over|above|older than|aged|age)\s*(?:>|≥|>=)?\s*(\d{2,3})|(\d{2,3})\s*(?:-|\s)?\s*(?:year|yr|y)s?"
    r"(?:\s*-?\s*old)?\b|(\d{2,3})\s*(?:yo|y/o|[mf])\b)",
    re.IGNORECASE,
)


def _older_forms(words: language.Words) -> tuple[tuple[str, ...], ...]:
    """The word table's wordings of older patients, as forms ("aged 80 and over" as one)."""
    return tuple(form_of(text) for text in sorted(words.of(language.WordClass.OLDER)))


def _older_stems(words: language.Words) -> frozenset[str]:
    return frozenset(stem(text) for text in words.of(language.WordClass.OLDER) if " " not in text)


@dataclass(frozen=True)
class Concept:
    """One thing the question asks about, with every wording that expresses it."""

    label: str
    role: str
    forms: tuple[tuple[str, ...], ...]
    weight: float = 1.0
    code: str = ""  # the vocabulary tag it came from, if any
    generic: bool = False  # that tag is a generic decision (`Tag.is_generic`: treatment, drug choice, risk)
    answer_kind: str = ""  # the kind of answer that tag asks for (`Tag.answer_kind`: "timing" for restart)
    context: bool = False  # where the patient is treated ("inpatient", "ICU"): counts for a text, never against it

    def to_dict(self) -> dict[str, object]:
        found = {"label": self.label, "role": self.role, "weight": round(self.weight, 3)}
        return {**found, "context": True} if self.context else found

    def names_intervention(self) -> bool:
        """Return True for a topic written or spelled out as a drug or procedure ("steroids", "PPI" as proton pump
        inhibitors) and never as a disease ("DU" is a duodenal ulcer). The head noun decides: "MRSA",
        methicillin-resistant Staphylococcus aureus, is an organism, though it names a drug. "post-op" names a time,
        not the procedure asked about."""
        if _TIME_OF.match(self.label):
            return False
        wordings = [self.label, *(" ".join(form) for form in self.forms if form)]
        return (
            self.role == TOPIC
            and any(is_intervention(text.split()[-1]) for text in wordings if text.split())
            and not any(is_disease(text) for text in wordings)
        )


def _scaffolding(forms: Sequence[tuple[str, ...]]) -> bool:
    """Return True for shorthand that can stand for scaffolding ("s/p" is "after", "pts" "patients"): no topic."""
    generic = language.current().derived(_question_stems)
    return any(form and set(form) <= generic for form in forms)


def _own_words(wording: str) -> str:
    """Return what a tag's wording names beyond how questions ask ("which antibiotic": "antibiotic")."""
    not_topic, generic = language.words(*language.NOT_TOPIC), language.current().derived(_question_stems)
    return " ".join(w for w in tokens(wording) if w not in not_topic and stem(w) not in generic)


def question_concepts(
    question: str,
    *,
    vocabulary: Vocabulary,
    pico: Pico,
    lexicon: Lexicon,
    rarity: Callable[[Sequence[str]], dict[str, float]] | None = None,
) -> list[Concept]:
    """Return the question's concepts: tagged conditions and decisions, its population, then its topic words.

    `rarity` weighs surface words (e.g. IDF over the abstract store); tag concepts weigh at least as much as their
    rarest word, so the condition always counts. Where a condition's patient is treated is a detail, as its stage is.
    """
    concepts: list[Concept] = []
    taken: list[tuple[int, int]] = []
    decided: list[tuple[int, int]] = []  # where the question names a drug to choose (`Tag.answer_kind` "drug")
    case_sentences = case_asking(question, vocabulary)  # a case's asking sentences, read once
    asked = asked_conditions(case_sentences, vocabulary)
    # The first condition named is the primary one; in a case that asks about another, it is the patient's history.
    primary = pico.primary_disease_tag if not vocabulary.conditions(sorted(asked)) else None
    decisions_asked = asked_decisions(case_sentences, vocabulary)
    asking = language.words(*QUESTION_WORDS)
    generic = language.current().derived(_question_stems)
    older_stems = language.current().derived(_older_stems)
    for match in vocabulary.matches(question):
        if match.kind not in (DISEASE, DECISION):
            continue
        taken.append((match.start, match.end))
        if vocabulary.is_modifier(match.code):
            continue  # "stage 4" narrows the condition; it is not a concept of its own
        if asked and match.kind == DISEASE and match.code not in asked and match.code != primary:
            continue  # a case's comorbidity ("CKD3a with eGFR 48" in a heart-failure question) is the patient's
        if decisions_asked and match.kind == DECISION and match.code not in decisions_asked:
            continue  # the story's decisions ("ctDNA surveillance", "CT shows no disease") are what was done
        term = vocabulary.terms.get(match.code)
        own_words = _own_words(match.text)
        if " " not in match.text.strip() and any(c.isupper() for c in match.text[1:]):
            own_words = match.text  # a score or a name as written ("HAS-BLED", "CHA2DS2-VASc"), never split
        generic_decision = vocabulary.is_generic(match.code)
        label = own_words if generic_decision and own_words else vocabulary.label(match.code)
        if any(concept.label == label for concept in concepts):
            continue
        if describes_patients(question, match, vocabulary) or is_negated(question, match):
            continue
        if generic_decision and not own_words:
            continue  # "which drug", "treatment": how the question is asked, not what about
        phrases = [own_words, vocabulary.label(match.code), *(term.synonyms if term else ())]
        # "which anticoagulant" is a drug choice about anticoagulants: their wordings count too.
        for inner in vocabulary.matches(own_words) if own_words else []:
            inner_term = vocabulary.terms.get(inner.code)
            phrases += [inner_term.label, *inner_term.synonyms] if inner_term else []
        forms = tuple(
            dict.fromkeys(
                f for phrase in phrases for f in lexicon.expand(form_of(phrase)) if f and not set(f) <= generic
            )
        )
        role = CONDITION if match.kind == DISEASE and match.code in pico.disease_tags else DECISION_ROLE
        answer_kind = vocabulary.answer_kind(match.code)
        concepts.append(Concept(label, role, forms, 1.0, match.code, generic_decision, answer_kind))
        decided += [(match.start, match.end)] if answer_kind == "drug" else []
    decided += _add_spelled_tags(question, concepts, taken, vocabulary=vocabulary, pico=pico, lexicon=lexicon)
    decided += lexicon.drug_spans(question)  # "sCAP on norepi - beta-lactam plus macrolide or resp FQ?"
    age = _AGE.search(question)
    older = bool(age and int(next(group for group in age.groups() if group)) >= 65)
    if age:
        taken.append(age.span())
    # The patient's stage ("stage IIIA"), amounts of time ("3 min") and, when the question asks what to add or about
    # another drug, the regimen the patient is on ("on ARNI, metoprolol - add dapagliflozin?") are details, not topics.
    taken += stages.stage_spans(question) + durations.amount_spans(question) + regimen_spans(question, decided)
    taken += measurement_spans(question)  # "K 6.1", "Hb 10.4", "EF 30%"
    taken += absent_spans(question)  # "no high-risk features", "no comorbidities"
    # Another wording of a condition or decision already found ("ESRD on HD": HD is haemodialysis, a synonym
    # of the dialysis tag that ESRD matched) is that concept, not a topic of its own.
    tagged = {form for concept in concepts for form in concept.forms}
    for written, start, end in lexicon.hits(question):
        exact = lexicon.exact.get(written)
        if exact is None and len(form_of(written)) > 2:
            # Shorthand of three or more words ("GLP-1 RA") is one topic, as written; two-word terms are read below.
            exact, written = lexicon.entries.get(form_of(written)), question[start:end]
        if exact is not None and not any(s <= start < e for s, e in taken):
            taken.append((start, end))
            if not set(exact) & tagged - {form_of(written)} and not _scaffolding(exact):
                concepts.append(Concept(written, TOPIC, lexicon.with_related(exact), 1.0))
    surface: list[tuple[str, tuple[tuple[str, ...], ...]]] = []
    words = [(m.group(0), m.start()) for m in re.finditer(r"[A-Za-z][A-Za-z0-9'-]*", question)]
    index = 0
    while index < len(words):
        word, start = words[index]
        if any(s <= start < e for s, e in taken):
            index += 1
            continue
        # Two-word lay terms first ("heart attack", "blood thinners").
        pair = form_of(f"{word} {words[index + 1][0]}") if index + 1 < len(words) else ()
        if len(pair) == 2 and (pair in lexicon.entries or pair in lexicon.related):
            if not _scaffolding(lexicon.expand(pair)):
                surface.append((f"{word} {words[index + 1][0]}", lexicon.expand(pair)))
            index += 2
            continue
        index += 1
        # "What's", "patient's": the word before the apostrophe decides.
        lower = re.sub(r"'(?:s|re|ll|ve|d|t|m)$", "", word.lower())
        if lower in asking or (len(lower) < 3 and not word.isupper()):
            continue
        form = form_of(word)
        if not form or (len(form) == 1 and form[0] in generic):
            continue
        if form[0] in older_stems:
            older = True
            continue
        # "Statins for ..." is capitalised as the question's first word, not as a name.
        written = word.lower() if start == words[0][1] and word[1:].islower() else word
        surface.append((written, lexicon.expand(form)))
    weights = rarity([word for word, _ in surface]) if rarity else {}
    for word, forms in dict((w, f) for w, f in surface).items():
        if any(concept.forms == forms for concept in concepts) or set(forms) & tagged - {form_of(word)}:
            continue
        concepts.append(Concept(word, TOPIC, forms, weights.get(word, 1.0)))
    if older:
        concepts.append(Concept("older adults", POPULATION, language.current().derived(_older_forms), 1.0))
    topic_max = max((concept.weight for concept in concepts if concept.role == TOPIC), default=1.0)
    core = sum(1 for concept in concepts if concept.role != TOPIC) * topic_max
    topics = sum(concept.weight for concept in concepts if concept.role == TOPIC)
    # The clinical question is its condition, decision and population; the rest of a case description (patient
    # details, units, other drugs) is context: together it weighs at most as much as the clinical question. In a
    # shorter question, or one without a condition, the other words are its substance ("HER2 in urothelial
    # carcinoma on adjuvant M-VEC", "rebound reflux after a PPI course is stopped").
    has_condition = any(concept.role == CONDITION for concept in concepts)
    described = has_condition and len(question.split()) >= CASE_WORDS
    scale = core / topics if described and topics > core else 1.0
    # Where a condition's patient is treated ("inpatient, about to be discharged") is a detail: a source stated for
    # that setting speaks more closely to the patient; one that does not say is not off the question.
    return [
        replace(c, weight=c.weight * scale, context=has_condition and bool(care_settings.settings_in(c.label)))
        if c.role == TOPIC
        else replace(c, weight=topic_max)
        for c in concepts
    ]


def _add_spelled_tags(
    question: str,
    concepts: list[Concept],
    taken: list[tuple[int, int]],
    *,
    vocabulary: Vocabulary,
    pico: Pico,
    lexicon: Lexicon,
) -> list[tuple[int, int]]:
    """Add the tags the question names only in shorthand ("a pt on HD" is on dialysis, "UGIB" a GI bleed) as the
    condition or decision concepts they are, with the tag's wordings, not as topic words; a generic decision by what
    its wording names ("abx" is "antibiotics", a drug choice, never all the ways of asking for one). Return where the
    question names a drug to choose among those added."""
    known = {concept.code for concept in concepts}
    asked = set(pico.disease_tags) | set(pico.decision_tags)
    decided: list[tuple[int, int]] = []
    for written, start, end in lexicon.hits(question):
        if any(s <= start < e for s, e in taken):
            continue
        for expansion in lexicon.wording.get(written, ())[:1]:
            for match in vocabulary.matches(expansion):
                term = vocabulary.terms.get(match.code)
                if term is None or match.code in known or match.code not in asked or term.is_modifier:
                    continue
                own_words = _own_words(match.text) if term.is_generic else term.label  # "abx": "antibiotics"
                if not own_words or match.kind not in (DISEASE, DECISION):
                    continue
                if match.end - match.start < 0.6 * len(expansion):
                    continue  # the tag names only a part of what the shorthand stands for
                own = lexicon.with_related(lexicon.exact.get(written) or lexicon.entries.get(form_of(written), ()))
                phrases = [own_words] if term.is_generic else [term.label, *term.synonyms]
                forms = tuple(
                    dict.fromkeys([*own, *(f for phrase in phrases for f in lexicon.expand(form_of(phrase)))])
                )
                role = CONDITION if match.kind == DISEASE and match.code in pico.disease_tags else DECISION_ROLE
                wordings = tuple(f for f in forms if f)
                concepts.append(Concept(own_words, role, wordings, 1.0, match.code, term.is_generic, term.answer_kind))
                known.add(match.code)
                taken.append((start, end))
                decided += [(start, end)] if term.answer_kind == "drug" else []
    return decided


def coverage(concepts: Sequence[Concept], index: TextIndex) -> tuple[float, list[Concept]]:
    """Return the weighted share of `concepts` the text covers, and the concepts it misses (a `context` concept
    counts only where the text covers it)."""
    concepts = [c for c in concepts if not c.context or index.covers(c)]
    total = sum(concept.weight for concept in concepts)
    missing = [concept for concept in concepts if not index.covers(concept)]
    if not total:
        return 0.0, missing
    return round(1 - sum(concept.weight for concept in missing) / total, 4), missing


def joined_phrases(question: str, topics: list[Concept]) -> list[Concept]:
    """Return the topic concepts with neighbours in the question joined ("tranexamic" "acid" → "tranexamic acid")."""
    lowered = question.lower()
    # Where each word stands as a word: "D" of "vitamin D" is not the "d" of "Does".
    found = [(re.search(rf"(?<!\w){re.escape(c.label.lower())}(?!\w)", lowered), c) for c in topics]
    placed = sorted(((match.start(), c) for match, c in found if match), key=lambda pair: pair[0])
    merged: list[tuple[int, Concept]] = []
    for start, concept in placed:
        if merged:
            last_start, last = merged[-1]
            gap = lowered[last_start + len(last.label) : start]
            plain = len(last.forms) == 1 and len(concept.forms) == 1  # abbreviations stand on their own
            # Neighbours are next to each other or hyphenated; a spaced dash separates ("PCN allergy - doxy?").
            if plain and re.fullmatch(r"\s+|-", gap) and start > last_start:
                label = question[last_start : start + len(concept.label)]
                merged[-1] = (last_start, replace(last, label=label, weight=max(last.weight, concept.weight)))
                continue
        merged.append((start, concept))
    return [concept for _, concept in merged]
