"""Choose curated decision aids (algorithm images) for an answer.

An image is shown only when both its disease tags and its decision tags overlap the question's.
There are no stock or generic teaching images: with no matching curated aid, an answer has no
image, which is exactly what management questions (drug choice, anticoagulation, duration,
therapy) without an imaging term must get.
"""

from __future__ import annotations

from collections.abc import Sequence

from evidence.models import DecisionAid
from evidence.pico import Pico

MAX_AIDS = 2


def aid_matches(aid: DecisionAid, pico: Pico) -> bool:
    return bool(set(aid.disease_tags) & set(pico.disease_tags)) and bool(
        set(aid.decision_tags) & set(pico.decision_tags)
    )


def select_decision_aids(pico: Pico, *, aids: Sequence[DecisionAid]) -> list[DecisionAid]:
    """Return at most two active curated aids whose disease and decision tags both match, best first."""
    matching = [aid for aid in aids if aid.is_active and aid_matches(aid, pico)]

    def overlap(aid: DecisionAid) -> tuple[int, int, str]:
        primary = int(pico.primary_disease_tag in aid.disease_tags) + int(
            pico.primary_decision_tag in aid.decision_tags
        )
        both = len(set(aid.disease_tags) & set(pico.disease_tags)) + len(
            set(aid.decision_tags) & set(pico.decision_tags)
        )
        return (primary, both, aid.title)

    return sorted(matching, key=overlap, reverse=True)[:MAX_AIDS]


def decision_aids_for(pico: Pico) -> list[DecisionAid]:
    """Return the curated aids for the question from the database."""
    if not pico.disease_tags or not pico.decision_tags:
        return []
    candidates = DecisionAid.objects.filter(
        is_active=True, disease_tags__overlap=pico.disease_tags, decision_tags__overlap=pico.decision_tags
    ).select_related("source")
    return select_decision_aids(pico, aids=list(candidates))
