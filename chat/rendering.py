"""Answer rendering: Markdown to sanitised HTML with citation markers linked to the references panel."""

from __future__ import annotations

import re

import markdown
import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# Model text may format, never link or embed: references come only from the verified panel.
ALLOWED_TAGS = {
    "p", "br", "hr", "ul", "ol", "li", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub", "del",
}  # fmt: skip
_MARKER = re.compile(r"\[(\d{1,3})\]")
_HEADING_LEVEL = re.compile(r"<(/?)h([12])>")
# A list straight after a line of prose ("Found 3:\n- a") is a list to a reader, but Markdown
# needs a blank line before it; without one the items show as literal "- " text.
_LIST_AFTER_PROSE = re.compile(r"^(?![-*+]\s|\d+[.)]\s|\s)(.+)\n(?=[-*+]\s|\d+[.)]\s)", re.MULTILINE)


def reference_anchor(message_id: int | str, number: int) -> str:
    return f"ref-{message_id}-{number}"


def render_answer_html(
    text: str,
    *,
    message_id: int | str,
    reference_count: int,
    quotes: dict[int, str] | None = None,
    names: dict[int, tuple[str, str]] | None = None,
) -> SafeString:
    """Return the answer as safe HTML; `[n]` markers become links to reference n of this message.

    `quotes` (reference number → the source sentence that supports the statement) become the
    marker's hover text, so the reader sees what the source says without leaving the answer.
    `names` (reference number → its identifier, e.g. "PMID 123", and its verified direct URL) are
    written before the marker, linked: a list of loaded rows names each row.
    """
    quotes, names = quotes or {}, names or {}
    source = _LIST_AFTER_PROSE.sub(r"\1\n\n", text or "")
    html = markdown.markdown(source, extensions=["sane_lists", "tables"], output_format="html")
    # Page headings are h1/h2: demote the answer's own top-level headings below them.
    html = _HEADING_LEVEL.sub(lambda m: f"<{m.group(1)}h3>", html)
    clean = nh3.clean(html, tags=ALLOWED_TAGS, attributes={}, link_rel=None, strip_comments=True)

    def link(match: re.Match[str]) -> str:
        number = int(match.group(1))
        if not 1 <= number <= reference_count:
            return escape(match.group(0))
        anchor = reference_anchor(message_id, number)
        quote = quotes.get(number, "")
        title = f' title="Source says: {escape(quote)}"' if quote else ""
        named = ""
        if number in names:
            label, url = names[number]
            named = (
                f'<a class="row-id" href="{escape(url)}" target="_blank" rel="noopener noreferrer">{escape(label)}</a> '
            )
        return (
            f'{named}<sup class="cite"><a href="#{anchor}" data-ref="{anchor}"{title} '
            f'aria-label="Reference {number}">[{number}]</a></sup>'
        )

    # Safe: nh3 sanitised the HTML above; the inserted links carry digits, an escaped quote and escaped names.
    return mark_safe(_MARKER.sub(link, clean))


def render_preview_html(text: str) -> SafeString:
    """Return a streamed, not yet verified answer as safe HTML (Markdown lists as lists; markers unlinked)."""
    return render_answer_html(text, message_id="preview", reference_count=0)
