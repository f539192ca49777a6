from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from chat.models import Message
from chat.rendering import reference_anchor, render_answer_html

register = template.Library()


@register.simple_tag
def answer_html(message: Message) -> SafeString:
    """Render an assistant message's Markdown as sanitised HTML with linked citation markers."""
    return render_answer_html(message.content, message_id=message.pk, reference_count=len(message.references))


@register.simple_tag
def ref_anchor(message: Message, number: int) -> str:
    return reference_anchor(message.pk, number)


@register.filter
def confidence_class(value: str) -> str:
    return {"GREEN": "green", "YELLOW": "yellow", "RED": "red"}.get(str(value), "")


@register.filter
def confidence_text(value: str) -> str:
    """Say what a confidence level means, for the badge's accessible description."""
    return {
        "GREEN": "at least two verified sources and most claims cited",
        "YELLOW": "only one verified source, or few claims cited",
        "RED": "no verified source",
    }.get(str(value), "")


@register.filter
def full_stop(value: str) -> str:
    """End a fragment with exactly one full stop ("Tie J et al." stays as it is)."""
    value = str(value or "").strip()
    return value if not value or value.endswith((".", "?", "!")) else value + "."
