"""TrialScout as the tray sees it: the search form's state, the loaded trials, and trial records for AI columns."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.http import QueryDict
from django.urls import reverse

from evidence.screening import without_instructions
from evidence.sources import ORIGIN_RETRIEVED, EvidenceSource, doc_id_for
from research import selectors
from research.context import ItemError, ItemRecord, PageContext, PageItem
from research.registries import page_get
from trials import services as trial_services
from trials.clients import CtgovError
from trials.constants import PAGE_TOKEN_PATTERN, PHASES, SEARCHABLE_STATUSES, phase_label, status_label
from trials.forms import TrialSearchForm
from trials.parsers import StudyPage, StudySummary
from trials.rendering import interventions_text

PAGE = "trialscout"
# Search pages are cached briefly so the tray and AI columns see what the page showed without
# asking ClinicalTrials.gov again; the registry changes daily at most.
SEARCH_CACHE_SECONDS = 600
# "Load more" pages the tray state may carry (each is a cached request).
MAX_LOADED_PAGES = 10
CHUNK_ID = "summary"


@dataclass(frozen=True)
class TrialScoutState:
    """The search of a TrialScout page and the page tokens of the result pages it has loaded."""

    search: dict[str, Any]
    tokens: tuple[str | None, ...]
    query: str

    @property
    def searched(self) -> bool:
        return bool(self.search)


def parse_state(state: str) -> TrialScoutState:
    """Return the validated search of a TrialScout query string; an invalid or empty one searches nothing.

    `more` carries the page tokens of pages appended with "Load more" (in order).
    """
    data = QueryDict(state or "")
    form = TrialSearchForm(data if any(data.values()) else None)
    if not (form.is_bound and form.is_valid()):
        return TrialScoutState(search={}, tokens=(), query="")
    search = form.search_kwargs()
    first = search.pop("page_token")
    more = [token for token in data.getlist("more") if re.fullmatch(PAGE_TOKEN_PATTERN, token)]
    tokens = tuple(dict.fromkeys([first, *more]))[:MAX_LOADED_PAGES]
    return TrialScoutState(search=search, tokens=tokens, query=state_query(search, tokens=tokens))


def state_query(search: dict[str, Any], *, tokens: tuple[str | None, ...] = (None,)) -> str:
    """Return the TrialScout query string of a search (and its loaded pages), as the page's URL writes it."""
    pairs: list[tuple[str, str]] = []
    for field, key in (("condition", "condition"), ("intervention", "intervention"), ("sponsor", "sponsor")):
        if search.get(field):
            pairs.append((key, search[field]))
    if search.get("term"):
        pairs.append(("q", search["term"]))
    pairs += [("phase", phase) for phase in search.get("phases", ())]
    pairs += [("status", status) for status in search.get("statuses", ())]
    if search.get("sort"):
        pairs.append(("sort", search["sort"]))
    if tokens and tokens[0]:
        pairs.append(("page_token", tokens[0]))
    pairs += [("more", token) for token in tokens[1:] if token]
    return urlencode(pairs)


def trial_search_cached(**search: Any) -> StudyPage:
    """Return `trials.services.trial_search(**search)`, cached for SEARCH_CACHE_SECONDS."""
    key_source = json.dumps({**search, "page_size": settings.CTGOV_PAGE_SIZE}, sort_keys=True, default=list)
    key = "trialscout:search:" + hashlib.sha256(key_source.encode()).hexdigest()[:32]
    page = cache.get(key)
    if page is None:
        page = trial_services.trial_search(**search)
        cache.set(key, page, SEARCH_CACHE_SECONDS)
    return page


def _start_year(summary: StudySummary) -> int | None:
    return int(summary.start_date[:4]) if summary.start_date[:4].isdecimal() else None


def study_item(summary: StudySummary) -> PageItem:
    """Return a search result as a tray row: its prompt line and the citable registry summary."""
    phase = phase_label(summary.phases) or "phase not reported"
    status = status_label(summary.overall_status) if summary.overall_status else "status not reported"
    conditions = "; ".join(summary.conditions) or "not reported"
    enrollment = f"enrollment {summary.enrollment}" if summary.enrollment is not None else "enrollment not reported"
    reported = "not reported"
    text = (
        f"{summary.brief_title}. Phase: {phase}. Status: {status}. Lead sponsor: {summary.lead_sponsor or reported}."
        f" Enrollment: {summary.enrollment if summary.enrollment is not None else reported}."
        f" Conditions: {conditions}. Interventions: {interventions_text(summary.interventions)}."
        f" Start date: {summary.start_date or reported}; completion date: {summary.completion_date or reported}."
    )
    source = EvidenceSource(
        doc_id=doc_id_for(nct=summary.nct_id),
        chunk_id=CHUNK_ID,
        origin=ORIGIN_RETRIEVED,
        title=summary.brief_title,
        text=text,
        nct=summary.nct_id,
        journal="ClinicalTrials.gov",
        year=_start_year(summary),
        kind="trial",
        section="registry summary",
    )
    line = " | ".join(
        [
            summary.nct_id,
            summary.brief_title or "(no title)",
            phase,
            status,
            summary.lead_sponsor or "sponsor not reported",
            enrollment,
            f"conditions: {conditions}",
            f"start {summary.start_date or 'not reported'}",
        ]
    )
    facets = {
        "phase": tuple(PHASES.get(value, value) for value in summary.phases),
        "status": (status,) if summary.overall_status else (),
        "sponsor": (summary.lead_sponsor,) if summary.lead_sponsor else (),
        "year": (str(_start_year(summary)),) if _start_year(summary) else (),
    }
    return PageItem(
        item_id=summary.nct_id,
        title=summary.brief_title,
        year=_start_year(summary),
        line=line,
        source=source,
        facets=facets,
        lacks=tuple(
            part
            for part, values in (("conditions", summary.conditions), ("interventions", summary.interventions))
            if not values
        ),
    )


def _header(search: dict[str, Any], *, total: int | None, loaded: int) -> list[str]:
    def show(value: str) -> str:
        return value or "(any)"

    return [
        f"Condition: {show(search.get('condition', ''))}",
        f"Intervention: {show(search.get('intervention', ''))}",
        f"Phase: {show(', '.join(PHASES[p] for p in search.get('phases', ())))}",
        f"Status: {show(', '.join(SEARCHABLE_STATUSES[s] for s in search.get('statuses', ())))}",
        f"Lead sponsor: {show(search.get('sponsor', ''))}",
        *([f"Other terms: {search['term']}"] if search.get("term") else []),
        (
            f"Counts: {total if total is not None else 'an unknown number of'} trials match in "
            f"ClinicalTrials.gov; {loaded} loaded on the page."
        ),
    ]


def build_context(*, state: str, user: Any) -> PageContext:
    """Return the TrialScout page state as the tray sees it (the search is re-read from the cache)."""
    page = page_get(PAGE)
    parsed = parse_state(state)
    context = PageContext(page=page, state=parsed.query, searched=parsed.searched)
    summaries: list[StudySummary] = []
    if parsed.searched:
        try:
            for token in parsed.tokens:
                result = trial_search_cached(**parsed.search, page_token=token)
                if context.total is None:
                    context.total = result.total_count
                summaries.extend(result.studies)
        except CtgovError as exc:
            context.error = trial_services.ctgov_error_message(exc, what="trial search")
    seen: set[str] = set()
    for summary in summaries:
        if summary.nct_id not in seen:
            seen.add(summary.nct_id)
            context.items.append(study_item(summary))
    context.header = _header(parsed.search, total=context.total, loaded=len(context.items))
    context.details = {"search": parsed.search}
    context.columns = selectors.ai_columns(user=user, page=PAGE)
    context.values = selectors.ai_column_values(columns=context.columns, item_ids=context.item_ids)
    return context


def load_items(*, item_ids: list[str]) -> dict[str, ItemRecord | ItemError]:
    """Return the full registry record of each trial (through the trial cache) for AI columns."""
    records: dict[str, ItemRecord | ItemError] = {}
    for nct_id in item_ids:
        try:
            details = trial_services.get_trial(nct_id=nct_id)
        except CtgovError as exc:
            records[nct_id] = ItemError(nct_id, trial_services.ctgov_error_message(exc, what=nct_id))
            continue
        records[nct_id] = ItemRecord(
            nct_id, without_instructions(details.trial.brief_title), without_instructions(details.text)
        )
    return records


def search_url(data: dict[str, Any]) -> str:
    """Return the TrialScout URL that fills the form with a `trial_search_suggestion` and runs it."""
    search = {
        "condition": data.get("condition", ""),
        "intervention": data.get("intervention", ""),
        "term": data.get("term", ""),
        "sponsor": data.get("sponsor", ""),
        "phases": [phase for phase in PHASES if phase in data.get("phase", [])],
        "statuses": [status for status in SEARCHABLE_STATUSES if status in data.get("status", [])],
    }
    return f"{reverse('research:trialscout')}?{state_query(search)}"
