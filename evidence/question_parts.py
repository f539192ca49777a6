"""What a question asks that an answer can miss: its clinical parts, read once from the question and its concepts.

`evidence.concepts` reads what a question is about; this module reads which of those concepts an answer must speak
to (a case's patient details are context, a study the question names is a source), the part of a long question
that is its clinical question, and the drug or procedure no quoted finding speaks to. The steps that judge,
compose and rate an answer read `QuestionParts`, not the question again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from evidence.case_questions import CASE_WORDS
from evidence.concepts import CONDITION, DECISION_ROLE, POPULATION, TOPIC, Concept
from evidence.kidney_function import question_range as kidney_range
from evidence.matching import TextIndex, form_of
from evidence.text import roman_value

LONG_QUESTION_WORDS = 15


# A grade or class written after a word ("FC III", "NYHA II", "ECOG 1").
_GRADE = re.compile(r"\s+([IVX]+|[0-5])[ab]?(?![\w-])")


def _graded(question: str, label: str) -> bool:
    if label.isupper() and roman_value(label) is not None:
        return True  # a bare Roman numeral is the class or stage of something, never a topic of its own
    # `label` written as a whole word right before a grade (one pattern for every label: compiling one per label was
    # a fiftieth of an answer's CPU).
    return any(
        question.endswith(label, 0, grade.start())
        and not re.match(r"[\w-]", question[grade.start() - len(label) - 1 : grade.start() - len(label)])
        and (grade.group(1).isdigit() or roman_value(grade.group(1)) is not None)
        for grade in _GRADE.finditer(question)
    )


def clinical_parts(
    question: str, concepts: Sequence[Concept], *, answered: bool = True, names_study: bool = False
) -> list[Concept]:
    """Return the parts of the question an answer can be missing.

    A question without a condition is all its concepts. One naming its condition is its condition, decision and
    population; the rest of a case description (patient details, other drugs) is context. In a shorter question
    an answer's sources, admitted for the condition and decision, may still miss what the clinician wrote in
    curated shorthand ("PsA", "CF"); an abstention may miss any of its words ("gout", "colchicine").
    """
    # The patient's grade or class ("FC III", "NYHA II", "ECOG 1") is a detail of the patient, never a missing part
    # (the regimen the patient is on is no concept at all: `question_concepts`).
    concepts = [c for c in concepts if c.role != TOPIC or not _graded(question, c.label)]
    # A question that names a study ("DELIVER - did the benefit fade at LVEF >60%?") is about that study's condition,
    # as one naming its condition is.
    if not names_study and not any(concept.role == CONDITION for concept in concepts):
        return list(concepts)
    case = len(question.split()) >= CASE_WORDS
    return [c for c in concepts if c.role != TOPIC or (not case and (not answered or c.forms != (form_of(c.label),)))]


@dataclass(frozen=True)
class QuestionParts:
    """What a question asks that an answer can miss, read once from the question and its concepts
    (`question_parts`): the steps that judge, compose and rate an answer read this, not the question again."""

    answerable: tuple[Concept, ...] = ()  # `clinical_parts(question, concepts)`
    of_case: tuple[Concept, ...] = ()  # the same with a short question's topic words too (`answered=False`)
    naming_study: tuple[Concept, ...] = ()  # the parts of a question that names a study (`names_study=True`)
    clinical_question: str = ""  # a long question's decision in its condition and population (`clinical_question`)
    has_condition: bool = False
    is_case: bool = False  # a case description (`CASE_WORDS` or more): its decisions are read less surely


def question_parts(question: str, concepts: Sequence[Concept]) -> QuestionParts:
    """Return what `question` asks that an answer can miss, read once."""
    return QuestionParts(
        tuple(clinical_parts(question, concepts)),
        tuple(clinical_parts(question, concepts, answered=False)),
        tuple(clinical_parts(question, concepts, names_study=True)),
        clinical_question(question, concepts),
        any(c.role == CONDITION for c in concepts),
        len(question.split()) >= CASE_WORDS,
    )


def unanswered_parts(parts: QuestionParts, sentences: Sequence[str], *, sources: Sequence[Named] = ()) -> list[str]:
    """Return what a question about a condition asks of it - the drug or procedure it names ("steroids" in
    "steroids for severe CAP?") - when none of `sentences` speaks to any of it, else [].

    The sources were admitted for the condition and may mention the drug ("does not endorse corticosteroids" in
    a guideline's description) without a finding on it being quoted; the nearest finding on something else does
    not answer the question. The decision tags are not read here: their findings word them in many ways ("good
    clinical outcomes" for prognosis), and the judge step already required the sources to address them. A study
    of `sources` the question names is a source, not a drug, and a kidney stage is the patient's detail.
    """
    if not parts.has_condition:
        return []
    names = {name.lower() for source in sources for name in (source.study_name, *source.names) if name}
    asked = [
        c
        for c in parts.answerable
        if c.names_intervention() and c.label.lower() not in names and kidney_range(c.label) is None
    ]
    if not asked:
        return []
    index = TextIndex(" ".join(sentences))
    missing = [c.label for c in asked if not index.covers(c)]
    return missing if len(missing) == len(asked) else []


class Named(Protocol):
    """A source with a study name and other names (`evidence.sources.EvidenceSource`)."""

    @property
    def study_name(self) -> str: ...
    @property
    def names(self) -> tuple[str, ...]: ...


def clinical_question(question: str, concepts: Sequence[Concept]) -> str:
    """Return a long question's clinical question - its decision in its condition and population - or "".

    A case vignette is compared with evidence as a whole and by this part, so its patient details do not
    push a source that answers the decision under the floor; a short question is its own clinical question.
    """
    conditions = [c.label for c in concepts if c.role in (CONDITION, POPULATION)]
    decisions = [c.label for c in concepts if c.role == DECISION_ROLE]
    if len(question.split()) < LONG_QUESTION_WORDS or not conditions or not decisions:
        return ""
    return f"{', '.join(decisions)} in {', '.join(conditions)}"
