"""The typed settings of the answer pipeline: retrieval sizes, thresholds, model, limits.

One object holds every knob that changes an answer. Unknown keys are rejected, every field has
a default and a description, and a short hash of the effective values is stored on each answer
so two answers can be compared and reproduced. Secrets and endpoints (API keys, base URLs) are
not part of it: they change where an answer is computed, not what it should be.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class AnswerSettings(BaseModel):
    """Settings for one run of the answer pipeline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["extractive", "anthropic", "openai"] = Field(
        "extractive",
        description="Who writes the answer: the built-in extractive composer or an LLM provider.",
    )
    model: str = Field("", description="Model name sent to the LLM provider (ignored by the extractive composer).")
    timeout_seconds: float = Field(60.0, gt=0, le=600, description="Per-request timeout for LLM calls, in seconds.")
    max_retries: int = Field(2, ge=0, le=5, description="SDK retries on 429/5xx/529 and connection errors.")
    max_tool_rounds: int = Field(4, ge=0, le=10, description="Most tool-use rounds before the model must answer.")
    max_tokens: int = Field(2048, ge=64, le=16384, description="Most tokens the model may generate per call.")
    temperature: float = Field(0.0, ge=0, le=1, description="Sampling temperature for LLM providers.")
    history_turns: int = Field(6, ge=0, le=40, description="Earlier messages of the conversation sent as context.")
    retrieval_k: int = Field(10, ge=1, le=50, description="Abstract chunks kept from hybrid search.")
    rerank: bool = Field(True, description="Rerank hybrid-search candidates before keeping the top k.")
    library_limit: int = Field(8, ge=0, le=30, description="Most curated library studies used as VERIFIED REFERENCES.")
    judge_semantic_weight: float = Field(
        0.6,
        ge=0,
        le=1,
        description="Weight of semantic similarity (question vs best chunk) against concept coverage in the "
        "evidence judgement score; calibrated by benchmarks/answerability.py --calibrate.",
    )
    judge_threshold: float = Field(
        0.6,
        ge=0,
        le=1,
        description="Judgement score a source needs to count as addressing the question; calibrated on PubMedQA.",
    )
    judge_min_semantic: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Semantic similarity (question vs best chunk) a source needs to be admitted at all, however many "
        "of the question's words it shares; checked on the PubMedQA development split.",
    )
    judge_direct_semantic: float = Field(
        0.6,
        ge=0,
        le=1,
        description="Semantic similarity a stored abstract needs to address the question directly (what GREEN "
        "requires): sharing the question's words is not enough.",
    )
    judge_direct_threshold: float = Field(
        0.65,
        ge=0,
        le=1,
        description="Judgement score above which a source covering the condition and decision addresses the "
        "question directly (what GREEN requires).",
    )
    claim_support_threshold: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Probability of support the claim verifier model must give a sentence (or two) of a "
        "statement's cited source for the statement to count as supported, on top of the number and name checks; "
        "unset: the threshold calibrated with the model (its verifier.json).",
    )
    repair_max_sources: int = Field(
        5,
        ge=3,
        le=5,
        description="Sources attached by citation repair (the top approved ones, one per document).",
    )
    composer_library_findings: int = Field(
        6, ge=0, le=10, description="Library key findings (best ranked first) the extractive composer states first."
    )
    composer_sentences: int = Field(6, ge=1, le=20, description="Abstract sentences the extractive composer selects.")
    composer_sentences_per_source: int = Field(
        2, ge=1, le=5, description="Most sentences the extractive composer takes from one abstract."
    )
    composer_redundancy: float = Field(
        0.6,
        gt=0,
        le=1,
        description="Word-overlap (Jaccard) above which a candidate sentence counts as redundant.",
    )
    fallback_to_extractive: bool = Field(
        True, description="When the LLM provider fails, compose the answer from the evidence instead."
    )
    tool_max_results: int = Field(5, ge=1, le=20, description="Most PubMed records one search_pubmed call returns.")
    live_search: bool = Field(
        True,
        description="Search PubMed live (and store what it finds) when stored evidence does not suffice: "
        "sufficiency below 50, no anchor pack, and too few sources directly addressing the question "
        "(evidence.sufficiency).",
    )
    live_search_max_results: int = Field(10, ge=1, le=50, description="Most PMIDs the live PubMed search fetches.")
    live_search_direct_sources: int = Field(
        2,
        ge=1,
        le=20,
        description="Admitted sources that address the question directly (condition, decision and meaning) which "
        "make stored evidence sufficient, so no live search runs; one directly-addressing review or guideline "
        "always suffices.",
    )
    live_search_coalesce_seconds: float = Field(
        3.0,
        ge=0,
        le=60,
        description="Longest a live search waits for an identical search already running (another user's answer, "
        "or a worker's) before going on itself; its results then come from the cache and the store.",
    )
    live_search_wait_seconds: float = Field(
        0.5,
        ge=0,
        le=60,
        description="Longest each request of a live search waits for a slot in the shared NCBI budget (3/s, 10/s with "
        "NCBI_API_KEY). When other answers hold the budget longer, this answer uses stored evidence and, with a "
        "Celery broker, the search is queued for a worker so later askers find its results stored.",
    )
    live_search_seconds: float = Field(
        2.0,
        gt=0,
        le=60,
        description="Longest the live search's requests may keep an answer waiting on NCBI: a slow response is cut "
        "off and no retry starts that would end later, so an unreachable or slow PubMed costs an answer at most "
        "this long (then it uses stored evidence).",
    )
    model_pico: bool = Field(
        True, description="With an LLM provider, let the model propose the PICO (validated; vocabulary fallback)."
    )
    model_claim_check: bool = Field(
        True,
        description="With an LLM provider, the model also judges the answer's claims against their candidate source "
        "sentences (one batched call, strict JSON); the local verifier decides where it fails or is off.",
    )

    def short_hash(self) -> str:
        """Return 12 hex characters identifying these exact settings."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def answer_settings(**overrides: Any) -> AnswerSettings:
    """Return the effective settings: Django settings, then `ANSWER_SETTINGS` (JSON), then `overrides`."""
    values: dict[str, Any] = {
        "provider": settings.LLM_PROVIDER,
        "model": settings.LLM_MODEL,
        "timeout_seconds": settings.LLM_TIMEOUT_SECONDS,
        "max_retries": settings.LLM_MAX_RETRIES,
        "max_tool_rounds": settings.LLM_MAX_TOOL_ROUNDS,
        "max_tokens": settings.LLM_MAX_TOKENS,
    }
    values.update(settings.ANSWER_SETTINGS)
    values.update(overrides)
    try:
        return AnswerSettings(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'settings'}: {error['msg']}" for error in exc.errors()
        )
        raise ImproperlyConfigured(
            f"Invalid answer-pipeline settings ({problems}). Check ANSWER_SETTINGS and the LLM_* variables; "
            f"valid keys are: {', '.join(AnswerSettings.model_fields)}."
        ) from exc
