"""The page and payload registries of the research pages (Tablizer, TrialScout).

A *payload* is structured data in a reply besides its prose: a suggested PubMed query, a
suggested trial search, a suggested AI column, or a trial record a tool fetched. Each type
names its parse marker, its JSON schema and the instructions the model reads. A *page* names
how its state becomes prompt text (the context builder), which payload types the model may
emit there and which tools it may call.

Types and pages are registered by the `research_pages` module of each installed app, which
`ResearchConfig.ready()` imports (as the admin autodiscovers `admin.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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
    # `data -> URL` for suggestions whose acceptance opens a page (fills and runs a search).
    accept_url: Callable[[dict[str, Any]], str] | None = None

    def url_for(self, data: dict[str, Any]) -> str:
        """Return the URL that accepting this payload opens, or "" when accepting does something else."""
        return self.accept_url(data) if self.accept_url else ""


@dataclass(frozen=True)
class Page:
    """A research page the chat tray serves."""

    name: str
    title: str
    url_name: str
    # `(state=, user=) -> PageContext`
    build_context: Callable[..., Any]
    # `(item_ids=) -> dict[item id, ItemRecord]`, used by AI columns
    load_items: Callable[..., Any]
    payload_types: tuple[str, ...]
    tools: tuple[str, ...]
    item_label: str
    item_label_plural: str
    search_payload: str
    description: str = ""


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
