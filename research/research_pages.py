"""The research workbench's payload types and pages (Tablizer, TrialScout), registered on start-up."""

from __future__ import annotations

from research.pages import tablizer, trialscout
from research.registries import Page, PayloadType, register_page, register_payload_type
from trials.constants import PHASES, SEARCHABLE_STATUSES
from trials.rendering import PAYLOAD_TYPE as TRIAL_DETAILS

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
        accept_url=tablizer.search_url,
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
                "term": {"type": "string", "maxLength": 300},
                "phase": {"type": "array", "items": {"enum": list(PHASES)}, "uniqueItems": True},
                "status": {"type": "array", "items": {"enum": list(SEARCHABLE_STATUSES)}, "uniqueItems": True},
                "sponsor": {"type": "string", "maxLength": 300},
                "explanation": _EXPLANATION,
            },
            "required": ["explanation"],
            "anyOf": [
                {"properties": {"condition": {"minLength": 1}}, "required": ["condition"]},
                {"properties": {"intervention": {"minLength": 1}}, "required": ["intervention"]},
                {"properties": {"term": {"minLength": 1}}, "required": ["term"]},
                {"properties": {"sponsor": {"minLength": 1}}, "required": ["sponsor"]},
                {"properties": {"phase": {"minItems": 1}}, "required": ["phase"]},
                {"properties": {"status": {"minItems": 1}}, "required": ["status"]},
            ],
            "additionalProperties": False,
        },
        instructions=(
            "To suggest a trial search, write on its own line TRIAL_SEARCH_SUGGESTION: followed by one JSON object "
            '{"condition": "...", "intervention": "<drug or intervention class>", "term": "<other words>", '
            '"phase": [...], "status": [...], "sponsor": "...", "explanation": "..."}; leave out what the user '
            'did not ask for. phase values: '
            + ", ".join(PHASES)
            + "; status values: "
            + ", ".join(SEARCHABLE_STATUSES)
            + ". Accepting fills the TrialScout form and runs it."
        ),
        accept_url=trialscout.search_url,
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
        url_name="research:tablizer",
        build_context=tablizer.build_context,
        load_items=tablizer.load_items,
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
        url_name="research:trialscout",
        build_context=trialscout.build_context,
        load_items=trialscout.load_items,
        payload_types=("trial_search_suggestion", "ai_column_suggestion", TRIAL_DETAILS),
        tools=("get_trial",),
        item_label="trial",
        item_label_plural="trials",
        search_payload="trial_search_suggestion",
        description="ClinicalTrials.gov search results as a table, with AI columns.",
    )
)
