"""Follow-up questions: "and in dialysis?" is read with the question before it.

A turn is a follow-up when it opens the way follow-ups open ("and …", "what about …", "what
dose?"), when it adds to the same patient ("he's also on …"), or when it names neither a condition nor an
intervention of its own. Its question is then
completed with the parts of the previous question it does not replace: the condition is carried
over (a new population is added to it), the intervention and the outcome are carried over unless
the follow-up names its own, and so is the population ("what about children?" replaces older
adults). A question that names its own condition and intervention starts a new
topic and inherits nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from evidence.concepts import CONDITION, DECISION_ROLE, POPULATION, TOPIC, Concept
from evidence.text import is_disease, is_intervention, is_population, tokens

_CUE = re.compile(
    r"^\s*(?:and|but|also|so|then|or|what\s+about|how\s+about|what\s+if|same\s+for|in|for|with|without|"
    r"instead|what\s+(?:dose|dosage|duration)|which\s+dose|how\s+long|how\s+much|how\s+often|"
    r"(?:is|does|do|should|can|would)\s+(?:it|they|that|this|these|those)|is\s+that)\b",
    re.IGNORECASE,
)
# "he's also on ASA 81 for a stent - keep that going?": a turn that adds to the same patient, however long.
_SAME_PATIENT = re.compile(r"^\s*(?:he|she)(?:'s|\u2019s|\s+is|\s+has|\s+was|\s+had)?\s+also\b", re.IGNORECASE)
_ANAPHORA = re.compile(r"\b(?:it|they|them|this|that|these|those|the\s+same|such)\b", re.IGNORECASE)
# A follow-up of more words than this that names a condition is a new question, whatever it opens with.
MAX_FOLLOW_UP_WORDS = 12

ConceptsOf = Callable[[str], list[Concept]]


@dataclass(frozen=True)
class FollowUp:
    """How a turn was read: the question the pipeline answers and what came from earlier turns."""

    question: str
    asked: str
    previous: str = ""
    carried: list[str] = field(default_factory=list)

    @property
    def is_follow_up(self) -> bool:
        return bool(self.previous)

    def to_dict(self) -> dict[str, object]:
        return {"asked": self.asked, "previous": self.previous, "carried": self.carried, "question": self.question}


def _is_condition(concept: Concept) -> bool:
    return concept.role == CONDITION or (concept.role == TOPIC and is_disease(_wordings(concept)))


def _is_intervention(concept: Concept) -> bool:
    text = _wordings(concept)
    return concept.role == DECISION_ROLE or (concept.role == TOPIC and is_intervention(text) and not is_disease(text))


def _wordings(concept: Concept) -> str:
    return concept.label


def _reads_as_follow_up(question: str, concepts: list[Concept]) -> bool:
    words = len(tokens(question))
    has_condition = any(_is_condition(c) for c in concepts)
    has_intervention = any(_is_intervention(c) for c in concepts)
    if _SAME_PATIENT.match(question):
        return True
    if has_condition and has_intervention and words > 4:
        return False
    if _CUE.match(question):
        return words <= MAX_FOLLOW_UP_WORDS or not has_condition
    if not has_condition and not has_intervention:
        # "children?", "still holds at 5 yrs?" are follow-ups; "Does hyperbaric O2 help nec fasc?" names topics
        # of its own.
        topics = sum(1 for c in concepts if c.role == TOPIC)
        return topics <= 1 or words <= 5 or bool(_ANAPHORA.search(question))
    # "apixaban or rivaroxaban?", "which agent do we keep once DAPT stops?": a question naming only an
    # intervention continues the topic.
    return not has_condition and (words <= MAX_FOLLOW_UP_WORDS or bool(_ANAPHORA.search(question)))


def read_turn(question: str, earlier_questions: Sequence[str], *, concepts_of: ConceptsOf) -> FollowUp:
    """Return how `question` is read after `earlier_questions` (the user's earlier turns, oldest first).

    Earlier turns are read the same way first, so a follow-up of a follow-up keeps the topic.
    """
    reading = ""
    for earlier in earlier_questions:
        reading = _join(earlier, reading, concepts_of).question if reading else earlier
    return _join(question, reading, concepts_of) if reading else FollowUp(question=question, asked=question)


def _join(question: str, previous: str, concepts_of: ConceptsOf) -> FollowUp:
    concepts = concepts_of(question)
    if not _reads_as_follow_up(question, concepts):
        return FollowUp(question=question, asked=question)
    given = {c.label.lower() for c in concepts}
    own_population = any(c.role == POPULATION or is_population(c.label) for c in concepts)
    own_intervention = any(_is_intervention(c) for c in concepts)
    own_outcome = any(
        c.role == TOPIC and not (_is_condition(c) or _is_intervention(c) or is_population(c.label)) for c in concepts
    )
    carried = []
    for concept in concepts_of(previous):
        if concept.label.lower() in given:
            continue
        if concept.role == POPULATION or is_population(concept.label):
            if not own_population:
                carried.append(concept.label)
        elif _is_condition(concept):
            carried.append(concept.label)
        elif _is_intervention(concept):
            if not own_intervention:
                carried.append(concept.label)
        elif not own_outcome:
            carried.append(concept.label)
    if not carried:
        return FollowUp(question=question, asked=question)
    completed = f"{question.strip().rstrip('?.!')} ({', '.join(dict.fromkeys(carried))})?"
    return FollowUp(question=completed, asked=question, previous=previous, carried=list(dict.fromkeys(carried)))
