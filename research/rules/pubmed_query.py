"""Rule-built PubMed queries for the tray when no language model is configured.

`build_pubmed_query` turns a request into PubMed syntax: MeSH terms of the tag vocabulary for the
diseases and decisions it names, free-text words as [tiab], publication types as [pt], and a
publication-date range; None when the text names nothing to search for.
"""

from __future__ import annotations

import re
from datetime import date

from evidence import language
from evidence.vocabulary import DISEASE, TagMatch, Vocabulary
from pubmed.query import Concept, build_query
from research.rules.request import ASKS_FOR_SEARCH, RequestText, free_terms

# Decision-tag matches that only restate the request ("treat", "therapy"): no MeSH block for them.
RESTATING = language.WordClass.RESTATING.value


# Publication-type phrases → PubMed [pt] values (longest phrases first).
PUBLICATION_TYPES: tuple[tuple[str, str, str], ...] = (
    (r"systematic\s+reviews?", "Systematic Review", "systematic reviews"),
    (r"meta-?\s?analy[sz]es|meta-?\s?analysis", "Meta-Analysis", "meta-analyses"),
    (r"randomi[sz]ed\s+(?:controlled\s+)?(?:clinical\s+)?trials?|\bRCTs?\b", "Randomized Controlled Trial", "RCTs"),
    (r"practice\s+guidelines?|guidelines?", "Guideline", "guidelines"),
    (r"case\s+reports?", "Case Reports", "case reports"),
    (r"clinical\s+trials?", "Clinical Trial", "clinical trials"),
    (r"(?<!systematic\s)\breviews?\b", "Review", "reviews"),
    (r"observational\s+stud(?:y|ies)", "Observational Study", "observational studies"),
)

_YEAR = r"(1[89]\d\d|20\d\d)"


def _years(text: RequestText, *, today: date) -> tuple[int | None, int | None, str]:
    """Return (from year, to year, phrase) of a publication-date constraint in the request."""
    patterns: list[tuple[str, object]] = [
        (rf"\b(?:between|from)\s+{_YEAR}\s+(?:and|to|-|until)\s+{_YEAR}\b", lambda m: (int(m[1]), int(m[2]))),
        (rf"\b{_YEAR}\s*(?:-|\u2013|to)\s*{_YEAR}\b", lambda m: (int(m[1]), int(m[2]))),
        (
            rf"\b(?:since|after|from|as of)\s+{_YEAR}\b",
            lambda m: (int(m[1]) + (m[0].lower().startswith("after")), None),
        ),
        (rf"\b(?:before|until|up to)\s+{_YEAR}\b", lambda m: (None, int(m[1]) - m[0].lower().startswith("before"))),
        (rf"\b(?:in|during|published in)\s+{_YEAR}\b", lambda m: (int(m[1]), int(m[1]))),
        (
            r"\b(?:in\s+|over\s+|from\s+|during\s+)?the\s+(?:last|past)\s+(\d{1,2}|one|two|three|five|ten)\s+years?\b",
            lambda m: (today.year - _number(m[1]) + 1, None),
        ),
    ]
    for pattern, build in patterns:
        match = re.search(pattern, text.text, re.IGNORECASE)
        if match and text.free(*match.span()):
            start, end = build(match)  # type: ignore[operator]
            text.take(*match.span())
            return start, end, match.group(0)
    return None, None, ""


def _number(word: str) -> int:
    return {"one": 1, "two": 2, "three": 3, "five": 5, "ten": 10}.get(word.lower()) or int(word)


def _publication_types(text: RequestText) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for pattern, value, label in PUBLICATION_TYPES:
        for match in re.finditer(pattern, text.text, re.IGNORECASE):
            if text.free(*match.span()):
                text.take(*match.span())
                if (value, label) not in found:
                    found.append((value, label))
    return found


def _tag_groups(text: RequestText, vocabulary: Vocabulary) -> list[tuple[list[TagMatch], str]]:
    """Return the tag matches to search for, grouped by span, with the text they matched."""
    groups: dict[tuple[int, int], list[TagMatch]] = {}
    restating = language.words(RESTATING)
    for match in vocabulary.matches(text.text):
        if not text.free(match.start, match.end):
            continue
        if match.kind != DISEASE and match.text.lower() in restating:
            text.take(match.start, match.end)  # "treatment" restates the request: not a search term
            continue
        groups.setdefault((match.start, match.end), []).append(match)
    for start, end in groups:
        text.take(start, end)
    return [(matches, matches[0].text) for _, matches in sorted(groups.items())]


def build_pubmed_query(*, text: str, vocabulary: Vocabulary, today: date | None = None) -> dict[str, str] | None:
    """Return {"query", "explanation"} for a `pubmed_query_suggestion`, or None if nothing can be searched."""
    request = RequestText(text)
    year_from, year_to, _ = _years(request, today=today or date.today())
    kinds = _publication_types(request)
    groups = _tag_groups(request, vocabulary)
    # Free words alone are a search only when the text asks for one ("hello" is not a query).
    free = free_terms(request.remaining()) if groups or kinds or ASKS_FOR_SEARCH.search(text) else []
    concepts: list[Concept] = []
    mesh_used: list[str] = []
    seen_codes: set[str] = set()
    for matches, matched_text in groups:
        codes = [match.code for match in matches if match.code not in seen_codes]
        if not codes:
            continue
        seen_codes.update(codes)
        mesh = vocabulary.mesh_for(codes)
        words = [matched_text, *(vocabulary.label(code) for code in codes)]
        concepts.append(Concept(synonyms=[word for word in words if "(" not in word], mesh=mesh))
        mesh_used.extend(term for term in mesh if term not in mesh_used)
    concepts += [Concept(synonyms=[term]) for term in free]
    if not concepts:
        return None
    if kinds:
        concepts.append(Concept(publication_types=[value for value, _ in kinds]))
    query = build_query(concepts, year_from=year_from, year_to=year_to)
    parts = []
    if mesh_used:
        parts.append(f"MeSH terms from MedCite's tag vocabulary ({', '.join(mesh_used)}) with their synonyms")
    if free:
        parts.append(f"the words {', '.join(repr(term) for term in free)} in titles and abstracts")
    explanation = "Searches PubMed for " + " and ".join(parts)
    if kinds:
        explanation += f", limited to {' or '.join(label for _, label in kinds)}"
    if year_from and year_to:
        explanation += f", published {year_from}-{year_to}" if year_from != year_to else f", published in {year_from}"
    elif year_from:
        explanation += f", published {year_from} or later"
    elif year_to:
        explanation += f", published up to {year_to}"
    return {"query": query, "explanation": explanation + "."}
