"""Choose the curated decision aids (diagrams and images) for an answer.

An aid is shown only for a question it answers: the question names every one of the aid's conditions
(its disease tags), and every specific decision the question asks is one of the aid's (generic ones,
"treatment", do not count against it). The AF-with-CKD dosing diagram is not shown for AF alone, and the
GI-bleeding diagram, which says nothing of when to restart the anticoagulant, is not shown when that
is what is asked. There are no stock or generic
teaching images: with no matching curated aid, an answer has none.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Prefetch

from evidence.models import DecisionAid, DecisionStep
from evidence.pico import Pico
from evidence.vocabulary import Vocabulary

MAX_AIDS = 2


def aid_matches(aid: DecisionAid, pico: Pico, vocabulary: Vocabulary) -> bool:
    """Return True when the question names all of the aid's conditions and asks only decisions the aid covers."""
    asked = set(pico.decision_tags)
    specific = {tag for tag in asked if not vocabulary.is_generic(tag)}
    covered = set(aid.decision_tags)
    return (
        bool(aid.disease_tags)
        and set(aid.disease_tags) <= set(pico.disease_tags)
        and bool(asked & covered)
        and specific <= covered
    )


def select_decision_aids(pico: Pico, *, aids: Sequence[DecisionAid], vocabulary: Vocabulary) -> list[DecisionAid]:
    """Return at most two active curated aids that match the question, the most specific first."""
    matching = [aid for aid in aids if aid.is_active and aid_matches(aid, pico, vocabulary)]

    def specificity(aid: DecisionAid) -> tuple[int, int, str]:
        decisions = len(set(aid.decision_tags) & set(pico.decision_tags))
        return (len(aid.disease_tags), decisions, aid.title)

    return sorted(matching, key=specificity, reverse=True)[:MAX_AIDS]


def decision_aids_for(pico: Pico, vocabulary: Vocabulary) -> list[DecisionAid]:
    """Return the curated aids for the question from the database, each diagram with its boxes and findings."""
    if not pico.disease_tags or not pico.decision_tags:
        return []
    steps = DecisionStep.objects.select_related("finding__study", "finding__reviewed_by").order_by("position", "id")
    candidates = (
        DecisionAid.objects.filter(
            is_active=True,
            disease_tags__contained_by=pico.disease_tags,
            decision_tags__overlap=pico.decision_tags,
        )
        .select_related("source")
        .prefetch_related(Prefetch("steps", queryset=steps))
    )
    return select_decision_aids(pico, aids=list(candidates), vocabulary=vocabulary)
