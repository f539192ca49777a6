from __future__ import annotations

from django import template

from evidence.tag_names import tag_label

register = template.Library()


@register.filter
def tag_name(code: str, labels: dict[str, str] | None) -> str:
    """Show a tag by its display name (`{{ code|tag_name:tag_names }}`), never by its code."""
    return tag_label(str(code), labels or {})
