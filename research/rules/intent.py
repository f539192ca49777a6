"""Whether a tray message asks for a search, for an AI column, or about the loaded rows (rules)."""

from __future__ import annotations

import re

SEARCH, COLUMN, ANALYSE = "search", "column", "analyse"
_COLUMN_REQUEST = re.compile(
    r"\b(?:ai\s+)?columns?\b|\b(?:flag|mark|tag|label|screen)\s+(?:each|every|all|which|the|these|rows?)\b",
    re.IGNORECASE,
)
_SEARCH_REQUEST = re.compile(
    r"\b(?:find|search|look(?:ing)?\s+for|show\s+me|quer(?:y|ies)|build|suggest|get\s+me|fetch|"
    r"pull\s+up|new\s+search)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^\s*(?:which|what|how|are|is|do|does|did|why|when|who|whose|can|could|should|would|summari[sz]e|compare|"
    r"count|tell|explain|give|describe)\b",
    re.IGNORECASE,
)
_ABOUT_LOADED = re.compile(
    r"\b(?:these|those|loaded|this\s+(?:list|table|page)|the\s+(?:results|table|list|rows))\b|\bof\s+them\b",
    re.IGNORECASE,
)

_ABOUT_ROWS_ONLY = re.compile(r"\bloaded\b|\bhow\s+many\b|\bwhich\s+of\b", re.IGNORECASE)


def classify_request(*, text: str, has_items: bool) -> str:
    """Return SEARCH, COLUMN or ANALYSE for a tray message (rules; the LLM decides for itself).

    A message about the loaded rows ("these", "the table") or phrased as a question about them is
    analysis (a count or list of them even when nothing is loaded); an explicit search request, or a
    bare description of what to find ("phase 3 NSCLC trials that are recruiting"), is a search.
    """
    if _COLUMN_REQUEST.search(text):
        return COLUMN
    if _ABOUT_LOADED.search(text):
        # With nothing loaded, a count or list of "the loaded" rows is still about rows (it gets "none are
        # loaded"); "what do these say about bleeding?" reads as a request to find some.
        return ANALYSE if has_items or _ABOUT_ROWS_ONLY.search(text) else SEARCH
    if _SEARCH_REQUEST.search(text) or not has_items:
        return SEARCH
    if "?" in text or _QUESTION.match(text):
        return ANALYSE
    return SEARCH
