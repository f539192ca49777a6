"""Template filters of the research pages' tray: payload cards and AI columns."""

from __future__ import annotations

from typing import Any

from django import template

from research.registries import PAYLOAD_TYPES
from trials.constants import PHASES, SEARCHABLE_STATUSES

register = template.Library()


@register.filter
def phase_labels(values: Any) -> str:
    """Return "Phase 2, Phase 3" for ["PHASE2", "PHASE3"]."""
    return ", ".join(PHASES.get(value, str(value)) for value in values or [])


@register.filter
def status_labels(values: Any) -> str:
    """Return "Recruiting, Completed" for ["RECRUITING", "COMPLETED"]."""
    return ", ".join(SEARCHABLE_STATUSES.get(value, str(value)) for value in values or [])


@register.filter
def payload_decidable(payload: dict[str, Any]) -> bool:
    """Return True if the user may accept or dismiss this payload (suggestions, not information cards)."""
    payload_type = PAYLOAD_TYPES.get(str(payload.get("type", "")))
    return bool(payload_type and payload_type.decidable)


@register.filter
def payload_state_label(state: str) -> str:
    return {"accepted": "Accepted", "dismissed": "Dismissed"}.get(str(state), "")
