"""What a case asks: its asking sentences, and the conditions and decisions they name.

A case tells the patient's story in statements and asks in its last sentences ("... Is adjuvant
immunotherapy supported for ctDNA-positive MIBC?"). What the story names (other conditions, the surveillance
and scans already done) is the patient's detail; what the asking sentences name is what the answer is about.
"""

from __future__ import annotations

from evidence.sentences import asking_part
from evidence.vocabulary import DECISION, DISEASE, Vocabulary, is_negated

CASE_WORDS = 25  # a question this long describes a patient


def case_asking(question: str, vocabulary: Vocabulary | None = None) -> str:
    """Return a case's asking sentences, or "" when the question is no case or asks in no separate sentence.

    With the `vocabulary`, a case whose questions name no decision to make - only the kind of answer wanted, "What
    do the trials say for episodes of this duration?" - asks what the sentences reporting a question ask too ("The
    nurse asks whether she should be switched from aspirin to apixaban").
    """
    asking = asking_part(question)
    if len(question.split()) < CASE_WORDS or asking == question:
        return ""
    if vocabulary and not any(
        m.kind == DECISION and not vocabulary.answer_kind(m.code) for m in vocabulary.matches(asking)
    ):
        asking = asking_part(question, reported=True)
    return asking


def asked_decisions(asking: str, vocabulary: Vocabulary) -> set[str]:
    """Return the decisions a case's asking sentences (`case_asking`) name, or an empty set when there are none or
    they name none: the surveillance and scans of the story are what happened, not what is asked."""
    return {m.code for m in vocabulary.matches(asking) if m.kind == DECISION} if asking else set()


def asked_conditions(asking: str, vocabulary: Vocabulary) -> set[str]:
    """Return the conditions a case asks about - those its asking sentences (`case_asking`) name, with their broader
    and narrower tags - or an empty set when there are none or they name no condition.

    A case tells the story of a patient with other conditions (CKD from an eGFR, diabetes); the question it asks
    names what it is about ("For HFmrEF, which drug class ...?"). The others are the patient's details.
    """
    if not asking:
        return set()
    named = {m.code for m in vocabulary.matches(asking) if m.kind == DISEASE and not is_negated(asking, m)}
    related = {broader for code in named for broader in vocabulary.broader_chain(code)}
    narrower = {code for code, term in vocabulary.terms.items() if term.broader in named}
    return named | related | narrower if named else set()
