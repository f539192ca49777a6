"""Template filters for trial pages: labels and the registry's Markdown, sanitised."""

from __future__ import annotations

import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from trials import constants, rendering

register = template.Library()

# ClinicalTrials.gov markup fields are CommonMark; raw HTML in them is shown as text, and the
# rendered HTML is sanitised again so nothing the registry holds can script our pages.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})
_ALLOWED_TAGS = {
    "p",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "code",
    "pre",
    "br",
    "blockquote",
    "a",
    "h4",
    "h5",
    "h6",
}


@register.filter
def ctgov_markdown(text: str) -> SafeString:
    """Render ClinicalTrials.gov Markdown as sanitised HTML."""
    html = _MARKDOWN.render(text or "")
    return mark_safe(nh3.clean(html, tags=_ALLOWED_TAGS, attributes={"ol": {"start"}, "a": {"href"}}))


@register.filter
def phase_label(phases: list[str]) -> str:
    return constants.phase_label(phases or [])


@register.filter
def status_label(status: str) -> str:
    return constants.status_label(status) if status else ""


@register.filter
def sex_label(sex: str) -> str:
    return constants.SEX_LABELS.get(sex, sex)


@register.simple_tag
def age_range(minimum: str, maximum: str) -> str:
    return rendering.age_range(minimum, maximum)


@register.simple_tag
def enrollment_text(count: int | None, kind: str) -> str:
    return rendering.enrollment_text(count, kind)


@register.filter
def interventions_text(interventions: list[dict[str, str]]) -> str:
    return rendering.interventions_text(interventions or [])
