"""Rule-based suggestions for the tray when no language model is configured.

- `build_pubmed_query`: PubMed syntax from a request - MeSH terms of the tag vocabulary for the
  diseases and decisions it names, free-text words as [tiab], publication types as [pt], and a
  publication-date range.
- `build_trial_search`: ClinicalTrials.gov parameters from a phrase such as "phase 3 NSCLC
  trials that are recruiting" - phases, statuses, sponsor, intervention and condition.
- `classify_request`: whether a tray message asks for a search, for an AI column, or about the
  loaded rows.
Each builder returns the payload data of its suggestion type, or None when the text names
nothing to search for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from chat.services.text import STOPWORDS
from evidence.vocabulary import DISEASE, TagMatch, Vocabulary
from trials.constants import PHASES, SEARCHABLE_STATUSES

# Words of the request itself, never part of what is searched for.
REQUEST_WORDS = frozenset(
    [
        "find",
        "search",
        "searches",
        "searching",
        "look",
        "looking",
        "show",
        "list",
        "give",
        "get",
        "fetch",
        "pull",
        "build",
        "make",
        "suggest",
        "suggestion",
        "write",
        "run",
        "query",
        "queries",
        "pubmed",
        "medline",
        "clinicaltrials",
        "gov",
        "ct",
        "registry",
        "please",
        "can",
        "could",
        "would",
        "me",
        "us",
        "i",
        "want",
        "like",
        "need",
        "some",
        "any",
        "all",
        "papers",
        "paper",
        "articles",
        "article",
        "publications",
        "publication",
        "literature",
        "research",
        "trials",
        "trial",
        "studies",
        "study",
        "registered",
        "ongoing",
        "published",
        "recent",
        "recently",
        "latest",
        "new",
        "newest",
        "good",
        "relevant",
        "related",
        "regarding",
        "concerning",
        "involving",
        "investigating",
        "looking",
        "on",
        "in",
        "for",
        "of",
        "about",
        "with",
        "that",
        "which",
        "who",
        "are",
        "is",
        "be",
        "there",
        "those",
        "these",
        "them",
        "it",
        "its",
        "from",
        "by",
        "and",
        "or",
        "to",
        "the",
        "a",
        "an",
    ]
)
# Decision-tag matches that only restate the request ("treat", "therapy"): no MeSH block for them.
GENERIC_DECISION_WORDS = frozenset(
    [
        "treat",
        "treatment",
        "treatments",
        "therapy",
        "therapies",
        "manage",
        "management",
        "start",
        "initiate",
        "give",
        "choose",
        "choosing",
        "choice",
        "preferred",
        "risk",
        "predict",
        "predicts",
        "detect",
        "diagnose",
        "diagnosis",
        "diagnostic",
        "monitor",
        "monitoring",
        "stop",
        "omit",
        "duration",
        "dose",
        "dosing",
        "image",
        "images",
        "picture",
        "photo",
        "follow-up",
        "follow",
        "up",
        "track",
        "how",
        "long",
    ]
)

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
_ASKS_FOR_SEARCH = re.compile(
    r"\b(?:trials?|stud(?:y|ies)|papers?|articles?|literature|publications?|search|find|look(?:ing)?\s+for|"
    r"quer(?:y|ies)|show\s+me)\b",
    re.IGNORECASE,
)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}


@dataclass
class _Text:
    """Request text with the spans already understood blanked out, so later rules skip them."""

    text: str
    taken: list[tuple[int, int]] = field(default_factory=list)

    def take(self, start: int, end: int) -> None:
        self.taken.append((start, end))

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.taken)

    def remaining(self) -> str:
        chars = list(self.text)
        for start, end in self.taken:
            for index in range(start, end):
                chars[index] = " "
        return "".join(chars)


def _quote(term: str) -> str:
    term = term.replace('"', "").strip()
    return f'"{term}"' if re.search(r"[\s,()\-/]", term) else term


def _years(text: _Text, *, today: date) -> tuple[int | None, int | None, str]:
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


def _publication_types(text: _Text) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for pattern, value, label in PUBLICATION_TYPES:
        for match in re.finditer(pattern, text.text, re.IGNORECASE):
            if text.free(*match.span()):
                text.take(*match.span())
                if (value, label) not in found:
                    found.append((value, label))
    return found


def _tag_groups(text: _Text, vocabulary: Vocabulary) -> list[tuple[list[TagMatch], str]]:
    """Return the tag matches to search for, grouped by span, with the text they matched."""
    groups: dict[tuple[int, int], list[TagMatch]] = {}
    for match in vocabulary.matches(text.text):
        if not text.free(match.start, match.end):
            continue
        if match.kind != DISEASE and match.text.lower() in GENERIC_DECISION_WORDS:
            text.take(match.start, match.end)  # "treatment" restates the request: not a search term
            continue
        groups.setdefault((match.start, match.end), []).append(match)
    for start, end in groups:
        text.take(start, end)
    return [(matches, matches[0].text) for _, matches in sorted(groups.items())]


def _free_terms(remaining: str) -> list[str]:
    """Return the free-text phrases left after the understood parts: runs of topic words."""
    phrases: list[str] = []
    current: list[str] = []
    for token in re.findall(r"[A-Za-z0-9][A-Za-z0-9'\-]*|[^\sA-Za-z0-9]", remaining):
        word = token.lower().strip("'")
        is_topic = (
            token[0].isalnum()
            and word not in STOPWORDS
            and word not in REQUEST_WORDS
            and not word.isdigit()
            and len(word) > 1
        )
        if is_topic:
            current.append(token)
            continue
        if current:
            phrases.append(" ".join(current))
            current = []
    if current:
        phrases.append(" ".join(current))
    # Long runs are usually two concepts ("apixaban warfarin"); keep phrases of up to four words.
    split: list[str] = []
    for phrase in phrases:
        words = phrase.split()
        split.extend(" ".join(words[index : index + 4]) for index in range(0, len(words), 4))
    return list(dict.fromkeys(split))


def build_pubmed_query(*, text: str, vocabulary: Vocabulary, today: date | None = None) -> dict[str, str] | None:
    """Return {"query", "explanation"} for a `pubmed_query_suggestion`, or None if nothing can be searched."""
    request = _Text(text)
    year_from, year_to, _ = _years(request, today=today or date.today())
    kinds = _publication_types(request)
    groups = _tag_groups(request, vocabulary)
    # Free words alone are a search only when the text asks for one ("hello" is not a query).
    free = _free_terms(request.remaining()) if groups or kinds or _ASKS_FOR_SEARCH.search(text) else []
    blocks: list[str] = []
    mesh_used: list[str] = []
    seen_codes: set[str] = set()
    for matches, matched_text in groups:
        codes = [match.code for match in matches if match.code not in seen_codes]
        if not codes:
            continue
        seen_codes.update(codes)
        mesh = vocabulary.mesh_for(codes)
        terms = [f'"{term}"[MeSH]' for term in mesh]
        words = list(dict.fromkeys([matched_text, *(vocabulary.label(code) for code in codes)]))
        terms += [f"{_quote(word)}[tiab]" for word in words if "(" not in word]
        mesh_used.extend(term for term in mesh if term not in mesh_used)
        blocks.append(terms[0] if len(terms) == 1 else "(" + " OR ".join(terms) + ")")
    blocks += [f"{_quote(term)}[tiab]" for term in free]
    if not blocks:
        return None
    if kinds:
        filters = [f'"{value}"[pt]' for value, _ in kinds]
        blocks.append(filters[0] if len(filters) == 1 else "(" + " OR ".join(filters) + ")")
    if year_from or year_to:
        blocks.append(f'("{year_from or 1800}"[dp] : "{year_to or 3000}"[dp])')
    query = " AND ".join(blocks)
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


# --- ClinicalTrials.gov ----------------------------------------------------------------------

_PHASE_WORD = r"(?:[1-4]|iv|iii|ii|i)"
_PHASES = re.compile(
    rf"\b(early\s+)?phases?\s*({_PHASE_WORD})((?:\s*(?:/|-|,|&|and|or)\s*(?:phase\s*)?{_PHASE_WORD}\b)*)",
    re.IGNORECASE,
)
_STATUSES: tuple[tuple[str, str], ...] = (
    (r"not\s+yet\s+(?:recruiting|open)", "NOT_YET_RECRUITING"),
    (r"active,?\s+(?:but\s+)?not\s+recruiting", "ACTIVE_NOT_RECRUITING"),
    (r"(?:currently\s+)?(?:recruiting|enrolling|open\s+for\s+enrol+ment|accepting\s+patients)", "RECRUITING"),
    (r"completed|finished", "COMPLETED"),
    (r"terminated|stopped\s+early", "TERMINATED"),
    (r"withdrawn", "WITHDRAWN"),
    (r"suspended", "SUSPENDED"),
)
_SPONSOR = re.compile(
    r"\b(?:sponsored|funded|run|led)\s+by\s+(?P<value>[A-Za-z0-9&.,'\- ]+?)"
    r"(?=\s+(?:that|which|who|with|in|for)\b|[.;?!]|$)",
    re.IGNORECASE,
)
_INTERVENTION = re.compile(
    r"\b(?:testing|evaluating|using|of|with|comparing|investigating|on)\s+"
    r"(?P<value>[A-Za-z0-9][A-Za-z0-9\-+/ ]*?)(?=\s+(?:in|for|among|that|which|who|versus|vs|and|or)\b|[,.;?!]|$)",
    re.IGNORECASE,
)


def _phase_values(match: re.Match[str]) -> list[str]:
    early = bool(match.group(1))
    words = [match.group(2), *re.findall(_PHASE_WORD, match.group(3) or "", re.IGNORECASE)]
    values = []
    for word in words:
        number = _ROMAN.get(word.lower(), word)
        value = f"EARLY_PHASE{number}" if early and number == "1" else f"PHASE{number}"
        if value in PHASES and value not in values:
            values.append(value)
    return values


def _is_topic(phrase: str) -> bool:
    return any(word.lower() not in STOPWORDS and word.lower() not in REQUEST_WORDS for word in phrase.split())


def build_trial_search(*, text: str, vocabulary: Vocabulary) -> dict[str, object] | None:
    """Return `trial_search_suggestion` data parsed from a request, or None if it names nothing to search for."""
    request = _Text(text)
    phases: list[str] = []
    for match in _PHASES.finditer(text):
        phases += [value for value in _phase_values(match) if value not in phases]
        request.take(*match.span())
    statuses: list[str] = []
    for pattern, value in _STATUSES:
        for match in re.finditer(rf"\b{pattern}\b", text, re.IGNORECASE):
            if request.free(*match.span()):
                request.take(*match.span())
                if value not in statuses:
                    statuses.append(value)
    sponsor = ""
    match = _SPONSOR.search(text)
    if match and request.free(*match.span()):
        sponsor = match.group("value").strip(" ,")
        request.take(*match.span())
    conditions: list[str] = []
    covered: set[str] = set()
    for tag_match in vocabulary.matches(text):
        if tag_match.kind != DISEASE or not request.free(tag_match.start, tag_match.end):
            continue
        term = vocabulary.terms.get(tag_match.code)
        # Stage tags qualify a disease; "lung cancer" and "NSCLC" both name one condition.
        if term is None or not term.mesh_terms or tag_match.code in covered or term.label.lower().startswith("stage"):
            request.take(tag_match.start, tag_match.end)
            continue
        covered.update([tag_match.code, *vocabulary.broader_chain(tag_match.code)])
        # An acronym ("NSCLC") becomes the tag's name; a written-out name is searched as written.
        acronym = tag_match.text.isupper() and len(tag_match.text) <= 6
        conditions.append(term.label if acronym else tag_match.text)
        request.take(tag_match.start, tag_match.end)
    intervention = ""
    for match in _INTERVENTION.finditer(request.remaining()):
        value = match.group("value").strip()
        if value and _is_topic(value) and request.free(*match.span("value")):
            intervention = value
            request.take(*match.span())
            break
    if not conditions and _ASKS_FOR_SEARCH.search(text):
        residual = " ".join(_free_terms(request.remaining()))
        if residual:
            conditions.append(residual)
    data: dict[str, object] = {}
    condition = " AND ".join(dict.fromkeys(conditions))
    if condition:
        data["condition"] = condition
    if intervention:
        data["intervention"] = intervention
    if phases:
        data["phase"] = [phase for phase in PHASES if phase in phases]
    if statuses:
        data["status"] = [status for status in SEARCHABLE_STATUSES if status in statuses]
    if sponsor:
        data["sponsor"] = sponsor
    if not data:
        return None
    described = []
    if data.get("phase"):
        described.append("/".join(PHASES[phase] for phase in data["phase"]).lower())  # type: ignore[union-attr]
    described.append("trials")
    if intervention:
        described.append(f"of {intervention}")
    if condition:
        described.append(f"in {condition}")
    if sponsor:
        described.append(f"sponsored by {sponsor}")
    if data.get("status"):
        labels = [SEARCHABLE_STATUSES[status].lower() for status in data["status"]]  # type: ignore[union-attr]
        described.append("that are " + " or ".join(labels))
    data["explanation"] = "Searches ClinicalTrials.gov for " + " ".join(described) + "."
    return data


# --- What the user asks for -------------------------------------------------------------------

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


def classify_request(*, text: str, has_items: bool) -> str:
    """Return SEARCH, COLUMN or ANALYSE for a tray message (rules; the LLM decides for itself).

    A message about the loaded rows ("these", "the table") or phrased as a question about them is
    analysis; an explicit search request, or a bare description of what to find ("phase 3 NSCLC
    trials that are recruiting"), is a search.
    """
    if _COLUMN_REQUEST.search(text):
        return COLUMN
    if _ABOUT_LOADED.search(text):
        return ANALYSE if has_items else SEARCH
    if _SEARCH_REQUEST.search(text) or not has_items:
        return SEARCH
    if "?" in text or _QUESTION.match(text):
        return ANALYSE
    return SEARCH
