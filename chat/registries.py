"""The page and payload registries of the research pages (Tablizer, TrialScout).

A *payload* is structured data in a reply besides its prose: a suggested PubMed query, a
suggested trial search, a suggested AI column, or a trial record a tool fetched. Each type
names its parse marker, its JSON schema and the instructions the model reads. A *page* names
how its state becomes prompt text (the context builder), which payload types the model may
emit there and which tools it may call.

Builders and loaders are dotted paths, imported on first use, so this module imports neither
the pubmed nor the trials app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.utils.module_loading import import_string

from trials.constants import PHASES, SEARCHABLE_STATUSES
from trials.rendering import PAYLOAD_TYPE as TRIAL_DETAILS


class UnknownPage(LookupError):
    """No page is registered under the name asked for."""


class UnknownPayloadType(LookupError):
    """No payload type is registered under the name asked for."""


@dataclass(frozen=True)
class PayloadType:
    """One kind of structured data a reply may carry."""

    name: str
    description: str
    schema: dict[str, Any]
    # Text the model writes before the JSON object, e.g. "PUBMED_QUERY_SUGGESTION:"; "" for tool payloads.
    marker: str = ""
    instructions: str = ""
    # Whether the user may accept or dismiss it (suggestions) or it is only shown (tool payloads).
    decidable: bool = True
    # Dotted path of `data -> URL` for suggestions whose acceptance opens a page (fills and runs a search).
    accept_url: str = ""

    @property
    def from_model(self) -> bool:
        return bool(self.marker)

    def url_for(self, data: dict[str, Any]) -> str:
        """Return the URL that accepting this payload opens, or "" when accepting does something else."""
        return import_string(self.accept_url)(data) if self.accept_url else ""


@dataclass(frozen=True)
class Page:
    """A research page the chat tray serves."""

    name: str
    title: str
    url_name: str
    context_builder: str
    item_loader: str
    payload_types: tuple[str, ...]
    tools: tuple[str, ...]
    item_label: str
    item_label_plural: str
    search_payload: str
    description: str = ""

    @cached_property
    def build_context(self) -> Callable[..., Any]:
        """Return the function `(state=, user=) -> PageContext` (imported on first use)."""
        return import_string(self.context_builder)

    @cached_property
    def load_items(self) -> Callable[..., Any]:
        """Return the function `(item_ids=) -> dict[item id, ItemRecord]` used by AI columns."""
        return import_string(self.item_loader)


PAYLOAD_TYPES: dict[str, PayloadType] = {}
PAGES: dict[str, Page] = {}


def register_payload_type(payload_type: PayloadType) -> PayloadType:
    if payload_type.name in PAYLOAD_TYPES:
        raise ValueError(f"Payload type {payload_type.name!r} is already registered.")
    if payload_type.marker and any(other.marker == payload_type.marker for other in PAYLOAD_TYPES.values()):
        raise ValueError(f"Parse marker {payload_type.marker!r} is already used by another payload type.")
    PAYLOAD_TYPES[payload_type.name] = payload_type
    return payload_type


def register_page(page: Page) -> Page:
    if page.name in PAGES:
        raise ValueError(f"Page {page.name!r} is already registered.")
    unknown = [name for name in page.payload_types if name not in PAYLOAD_TYPES]
    if unknown:
        raise ValueError(f"Page {page.name!r} names unregistered payload types: {', '.join(unknown)}.")
    PAGES[page.name] = page
    return page


def page_get(name: str) -> Page:
    """Return the registered page `name`, or raise UnknownPage listing the pages there are."""
    try:
        return PAGES[name]
    except KeyError:
        raise UnknownPage(f"There is no research page {name!r}; the pages are: {', '.join(sorted(PAGES))}.") from None


def payload_type_get(name: str) -> PayloadType:
    """Return the registered payload type `name`, or raise UnknownPayloadType."""
    try:
        return PAYLOAD_TYPES[name]
    except KeyError:
        raise UnknownPayloadType(
            f"There is no payload type {name!r}; the types are: {', '.join(sorted(PAYLOAD_TYPES))}."
        ) from None


def page_payload_types(page: Page) -> list[PayloadType]:
    """Return the payload types of `page`, in the page's order."""
    return [PAYLOAD_TYPES[name] for name in page.payload_types]


# --- Payload types --------------------------------------------------------------------------------

_EXPLANATION = {"type": "string", "minLength": 1, "maxLength": 600}

register_payload_type(
    PayloadType(
        name="pubmed_query_suggestion",
        description="A PubMed query the user can run on the Tablizer with one click.",
        marker="PUBMED_QUERY_SUGGESTION:",
        schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 2, "maxLength": 1000},
                "explanation": _EXPLANATION,
            },
            "required": ["query", "explanation"],
            "additionalProperties": False,
        },
        instructions=(
            "To suggest a PubMed search, write on its own line PUBMED_QUERY_SUGGESTION: followed by one JSON "
            'object {"query": "<PubMed query: MeSH terms with [MeSH], free text with [tiab], AND/OR, '
            'publication types with [pt]>", "explanation": "<one or two sentences: what it finds and why>"}. '
            "The user sees a card with Accept (runs the search) and Dismiss."
        ),
        accept_url="chat.research.pages.tablizer.search_url",
    )
)

register_payload_type(
    PayloadType(
        name="trial_search_suggestion",
        description="A ClinicalTrials.gov search that fills the TrialScout form when accepted.",
        marker="TRIAL_SEARCH_SUGGESTION:",
        schema={
            "type": "object",
            "properties": {
                "condition": {"type": "string", "maxLength": 300},
                "intervention": {"type": "string", "maxLength": 300},
                "phase": {"type": "array", "items": {"enum": list(PHASES)}, "uniqueItems": True},
                "status": {"type": "array", "items": {"enum": list(SEARCHABLE_STATUSES)}, "uniqueItems": True},
                "sponsor": {"type": "string", "maxLength": 300},
                "explanation": _EXPLANATION,
            },
            "required": ["explanation"],
            "anyOf": [
                {"properties": {"condition": {"minLength": 1}}, "required": ["condition"]},
                {"properties": {"intervention": {"minLength": 1}}, "required": ["intervention"]},
                {"properties": {"sponsor": {"minLength": 1}}, "required": ["sponsor"]},
                {"properties": {"phase": {"minItems": 1}}, "required": ["phase"]},
                {"properties": {"status": {"minItems": 1}}, "required": ["status"]},
            ],
            "additionalProperties": False,
        },
        instructions=(
            "To suggest a trial search, write on its own line TRIAL_SEARCH_SUGGESTION: followed by one JSON object "
            '{"condition": "...", "intervention": "...", "phase": [...], "status": [...], "sponsor": "...", '
            '"explanation": "..."}; leave out what the user did not ask for. phase values: '
            + ", ".join(PHASES)
            + "; status values: "
            + ", ".join(SEARCHABLE_STATUSES)
            + ". Accepting fills the TrialScout form and runs it."
        ),
        accept_url="chat.research.pages.trialscout.search_url",
    )
)

register_payload_type(
    PayloadType(
        name="ai_column_suggestion",
        description="A column the language model fills for every loaded row (yes/no/unclear, or short text).",
        marker="AI_COLUMN_SUGGESTION:",
        schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 60},
                "criteria": {"type": "string", "minLength": 3, "maxLength": 1000},
                "type": {"enum": ["boolean", "text"]},
                "explanation": _EXPLANATION,
            },
            "required": ["name", "criteria", "type", "explanation"],
            "additionalProperties": False,
        },
        instructions=(
            "To suggest an AI column (the model judges every loaded row against a criterion), write on its own "
            'line AI_COLUMN_SUGGESTION: followed by one JSON object {"name": "<short column header>", "criteria": '
            '"<the question asked of each row>", "type": "boolean" or "text", "explanation": "..."}. Use boolean '
            "for yes/no criteria (the column can then be filtered), text for a short extracted value."
        ),
    )
)

register_payload_type(
    PayloadType(
        name=TRIAL_DETAILS,
        description="A ClinicalTrials.gov record fetched by the get_trial tool, shown as a card.",
        schema={
            "type": "object",
            "properties": {
                "type": {"const": TRIAL_DETAILS},
                "nct_id": {"type": "string", "pattern": "^NCT[0-9]{8}$"},
                "url": {"type": "string"},
                "brief_title": {"type": "string"},
                "phase_label": {"type": "string"},
                "status_label": {"type": "string"},
                "lead_sponsor": {"type": "string"},
                "enrollment": {"type": ["integer", "null"]},
                "conditions": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["type", "nct_id", "url", "brief_title"],
        },
        decidable=False,
    )
)

# --- Pages ----------------------------------------------------------------------------------------

register_page(
    Page(
        name="tablizer",
        title="Tablizer",
        url_name="pubmed:tablizer",
        context_builder="chat.research.pages.tablizer.build_context",
        item_loader="chat.research.pages.tablizer.load_items",
        payload_types=("pubmed_query_suggestion", "ai_column_suggestion"),
        tools=("search_pubmed", "get_pubmed_article"),
        item_label="article",
        item_label_plural="articles",
        search_payload="pubmed_query_suggestion",
        description="PubMed search results as a table, with snapshots, compare mode and AI columns.",
    )
)

register_page(
    Page(
        name="trialscout",
        title="TrialScout",
        url_name="trials:trialscout",
        context_builder="chat.research.pages.trialscout.build_context",
        item_loader="chat.research.pages.trialscout.load_items",
        payload_types=("trial_search_suggestion", "ai_column_suggestion", TRIAL_DETAILS),
        tools=("get_trial",),
        item_label="trial",
        item_label_plural="trials",
        search_payload="trial_search_suggestion",
        description="ClinicalTrials.gov search results as a table, with AI columns.",
    )
)
