from __future__ import annotations

from django import template
from django.utils.safestring import SafeString

from chat.models import Message
from chat.rendering import reference_anchor, render_answer_html

register = template.Library()


@register.simple_tag
def answer_html(message: Message) -> SafeString:
    """Render an assistant message's Markdown as sanitised HTML with linked citation markers."""
    quotes: dict[int, str] = {}
    for citation in message.extras.get("citations", []):
        support = citation.get("support") or []
        if support and isinstance(citation.get("n"), int):
            quotes.setdefault(citation["n"], " … ".join(quote["quote"] for quote in support[:2]))
    return render_answer_html(
        message.content, message_id=message.pk, reference_count=len(message.references), quotes=quotes
    )


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
        "GREEN": "at least two sources, or a guideline or review, directly address the question and support the answer",
        "YELLOW": "one primary study, or evidence that addresses the question only in part",
        "RED": "no admitted evidence addresses the question",
    }.get(str(value), "")


@register.filter
def full_stop(value: str) -> str:
    """End a fragment with exactly one full stop ("Tie J et al." stays as it is)."""
    value = str(value or "").strip()
    return value if not value or value.endswith((".", "?", "!")) else value + "."
