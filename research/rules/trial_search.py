"""Rule-built ClinicalTrials.gov searches for the tray when no language model is configured.

`build_trial_search` reads phases, statuses, sponsor, intervention and condition from a phrase
such as "phase 3 NSCLC trials that are recruiting"; None when it names nothing to search for.
Nothing the request names is dropped: a leftover phrase that reads as a drug or an intervention class
("immunotherapy", "PD-1 inhibitors") is the intervention (`query.intr`), any other leftover topic
words are searched as other terms over the whole record (`query.term`).
"""

from __future__ import annotations

import re

from evidence import language
from evidence.text import is_intervention
from evidence.vocabulary import DISEASE, Vocabulary
from research.rules.pubmed_query import RESTATING
from research.rules.request import ASKS_FOR_SEARCH, REQUEST_WORDS, RequestText, free_terms
from trials.constants import PHASES, SEARCHABLE_STATUSES, phase_code

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
        value = phase_code(word, early=early)
        if value is not None and value not in values:
            values.append(value)
    return values


def _is_topic(phrase: str) -> bool:
    never_searched = language.words(*REQUEST_WORDS)
    return any(word.lower() not in never_searched for word in phrase.split())


def build_trial_search(*, text: str, vocabulary: Vocabulary) -> dict[str, str | list[str]] | None:
    """Return `trial_search_suggestion` data parsed from a request, or None if it names nothing to search for."""
    request = RequestText(text)
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
    sponsor_match = _SPONSOR.search(text)
    if sponsor_match and request.free(*sponsor_match.span()):
        sponsor = sponsor_match.group("value").strip(" ,")
        request.take(*sponsor_match.span())
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
    named = bool(conditions or intervention or phases or statuses or sponsor)
    # Free words alone are a search only when the text asks for one ("hello" is not a query).
    leftovers = (
        [phrase for phrase in free_terms(request.remaining()) if phrase.lower() not in language.words(RESTATING)]
        if named or ASKS_FOR_SEARCH.search(text)
        else []
    )
    if not intervention:
        intervention = next((phrase for phrase in leftovers if is_intervention(phrase)), "")
        leftovers = [phrase for phrase in leftovers if phrase != intervention]
    if not conditions and leftovers:
        conditions, leftovers = [" ".join(leftovers)], []
    other_terms = " ".join(leftovers)
    data: dict[str, str | list[str]] = {}
    condition = " AND ".join(dict.fromkeys(conditions))
    if condition:
        data["condition"] = condition
    if intervention:
        data["intervention"] = intervention
    if other_terms:
        data["term"] = other_terms
    # Ordered as the API lists them, whatever order the request named them in.
    phases = [phase for phase in PHASES if phase in phases]
    statuses = [status for status in SEARCHABLE_STATUSES if status in statuses]
    if phases:
        data["phase"] = phases
    if statuses:
        data["status"] = statuses
    if sponsor:
        data["sponsor"] = sponsor
    if not data:
        return None
    described = []
    if phases:
        described.append("/".join(PHASES[phase] for phase in phases).lower())
    described.append("trials")
    if intervention:
        described.append(f"of {intervention}")
    if condition:
        described.append(f"in {condition}")
    if other_terms:
        described.append(f"mentioning {other_terms}")
    if sponsor:
        described.append(f"sponsored by {sponsor}")
    if statuses:
        labels = [SEARCHABLE_STATUSES[status].lower() for status in statuses]
        described.append("that are " + " or ".join(labels))
    data["explanation"] = "Searches ClinicalTrials.gov for " + " ".join(described) + "."
    return data
