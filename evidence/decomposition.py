"""Split long clinical questions (over 100 words) into 3-4 focused sub-queries for retrieval.

Each sub-query has at most 20 words and names a disease, so every retrieval stays on topic. With
a model configured the model proposes them (validated); otherwise, and on any failure, they are
built from the PICO. If neither can produce valid sub-queries (no disease term at all), the
original question truncated to 200 characters is the one query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import jsonschema
import structlog

from evidence.pico import LlmJson, Pico
from evidence.vocabulary import DISEASE, Vocabulary

logger = structlog.get_logger(__name__)

LONG_QUESTION_WORDS = 100
MAX_SUBQUERY_WORDS = 20
FALLBACK_CHARACTERS = 200
CATEGORIES = ("core_decision", "complications", "duration_monitoring", "alternatives")

SUBQUERY_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["sub_queries"],
    "properties": {
        "sub_queries": {
            "type": "array",
            "minItems": 3,
            "maxItems": 4,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["category", "query"],
                "properties": {"category": {"enum": list(CATEGORIES)}, "query": {"type": "string"}},
            },
        }
    },
}


@dataclass(frozen=True)
class SubQuery:
    category: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def word_count(text: str) -> int:
    return len(re.findall(r"\S+", text))


def _clip(text: str) -> str:
    return " ".join(text.split()[:MAX_SUBQUERY_WORDS])


def fallback_query(question: str) -> list[SubQuery]:
    """Return the original question, cut to 200 characters, as the single query."""
    return [SubQuery("core_decision", " ".join(question.split())[:FALLBACK_CHARACTERS])]


def _valid(sub_queries: Sequence[SubQuery], vocabulary: Vocabulary) -> bool:
    return 3 <= len(sub_queries) <= 4 and all(
        word_count(sq.text) <= MAX_SUBQUERY_WORDS and vocabulary.tags_in(sq.text, DISEASE) for sq in sub_queries
    )


def _from_pico(pico: Pico, vocabulary: Vocabulary) -> list[SubQuery]:
    if not pico.primary_disease_tag:
        return []
    disease = vocabulary.label(pico.primary_disease_tag)
    others = [vocabulary.label(t) for t in pico.secondary_disease_tags[:1]]
    condition = disease + (f" with {others[0]}" if others else "")
    decision = vocabulary.label(pico.primary_decision_tag) if pico.primary_decision_tag else "management"
    intervention = pico.intervention or decision
    outcome = pico.outcome or "bleeding, adverse events and mortality"
    alternatives = f"alternatives to {intervention}" + (f" versus {pico.comparison}" if pico.comparison else "")
    return [
        SubQuery("core_decision", _clip(f"{decision} {intervention} in {condition}")),
        SubQuery("complications", _clip(f"{outcome} with {intervention} in {condition}")),
        SubQuery("duration_monitoring", _clip(f"duration and monitoring of {intervention} in {condition}")),
        SubQuery("alternatives", _clip(f"{alternatives} in {condition}")),
    ]


def decompose_question(
    question: str, *, pico: Pico, vocabulary: Vocabulary, llm_json: LlmJson | None = None
) -> list[SubQuery]:
    """Return the retrieval queries for `question`: itself if short, else 3-4 validated sub-queries."""
    if word_count(question) <= LONG_QUESTION_WORDS:
        return [SubQuery("core_decision", " ".join(question.split()))]
    if llm_json is not None:
        try:
            raw = llm_json(
                "Split this long clinical question into 3 or 4 search queries of at most 20 words each, one per "
                f"category ({', '.join(CATEGORIES)}). Every query must name the disease. Reply as JSON "
                '{"sub_queries": [{"category": ..., "query": ...}]}.\n\nQUESTION: ' + question,
                SUBQUERY_JSON_SCHEMA,
            )
            jsonschema.validate(raw, SUBQUERY_JSON_SCHEMA)
            proposed = [SubQuery(item["category"], " ".join(item["query"].split())) for item in raw["sub_queries"]]
            if _valid(proposed, vocabulary):
                return proposed
            logger.warning("decomposition_llm_invalid", reason="word limit or missing disease term")
        except Exception as exc:  # any model failure falls back to the deterministic split
            logger.warning("decomposition_llm_failed", error=str(exc)[:300])
    built = _from_pico(pico, vocabulary)
    if _valid(built, vocabulary):
        return built
    logger.info("decomposition_fallback", words=word_count(question))
    return fallback_query(question)
