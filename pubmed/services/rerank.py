"""Rerank the top retrieved chunks down to k.

The default reranker needs no model: it blends the fused retrieval rank with how much of the
query (IDF-weighted over the candidates, title matches counting extra) each hit covers. When an
LLM provider is configured and an LLM reranker is registered (`register_llm_reranker`, or the
dotted path in `PUBMED_LLM_RERANKER`), that reranker orders the candidates instead; its answer is
checked (only candidate PMIDs, no duplicates) and any failure falls back to the default.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import structlog
from django.conf import settings
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from pubmed.services.search import ChunkHit

logger = structlog.get_logger(__name__)

LlmReranker = Callable[[str, Sequence["ChunkHit"]], Sequence[str]]
"""Given the query and candidate hits, return PMIDs best first (a subset or permutation)."""

_registered: LlmReranker | None = None

# Weight of query coverage against the retrieval rank prior in the default reranker.
COVERAGE_WEIGHT = 0.5
TITLE_BONUS = 0.5

_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")
_STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "been", "being", "by", "can", "could", "did", "do", "does",
        "for", "from", "had", "has", "have", "how", "if", "in", "into", "is", "it", "its", "may", "might",
        "more", "most", "no", "not", "of", "on", "or", "our", "should", "such", "than", "that", "the",
        "their", "them", "then", "there", "these", "they", "this", "those", "to", "was", "we", "were", "what",
        "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
    )
)


def register_llm_reranker(reranker: LlmReranker | None) -> None:
    """Use `reranker` whenever an LLM provider is configured (None unregisters it)."""
    global _registered
    _registered = reranker


def _llm_reranker() -> LlmReranker | None:
    if getattr(settings, "LLM_PROVIDER", "extractive") == "extractive":
        return None
    if _registered is not None:
        return _registered
    path = getattr(settings, "PUBMED_LLM_RERANKER", "")
    return import_string(path) if path else None


def _terms(text: str) -> list[str]:
    # A light stem (plural/-ing/-ed) so "statins" matches "statin" without a stemmer dependency.
    words = [word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS and len(word) > 1]
    return [re.sub(r"(?:ies|es|s|ing|ed)$", "", word) if len(word) > 4 else word for word in words]


def lexical_rerank(*, query: str, hits: Sequence[ChunkHit], k: int) -> list[ChunkHit]:
    """Order hits by retrieval rank blended with IDF-weighted query-term coverage (title counts extra)."""
    query_terms = set(_terms(query))
    if not hits or not query_terms:
        return list(hits[:k])
    documents = [(set(_terms(hit.title)), set(_terms(hit.text))) for hit in hits]
    count = len(hits)
    idf = {
        term: math.log(1 + count / (1 + sum(1 for title, body in documents if term in title or term in body)))
        for term in query_terms
    }
    total = sum(idf.values()) or 1.0
    scored = []
    for rank, (hit, (title, body)) in enumerate(zip(hits, documents, strict=True)):
        coverage = sum(weight for term, weight in idf.items() if term in title or term in body) / total
        in_title = sum(weight for term, weight in idf.items() if term in title) / total
        prior = 1.0 / (1 + rank / 5)
        scored.append((prior + COVERAGE_WEIGHT * (coverage + TITLE_BONUS * in_title), -rank, hit))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [hit for _, _, hit in scored[:k]]


def rerank_hits(*, query: str, hits: Sequence[ChunkHit], k: int) -> list[ChunkHit]:
    """Return the k best of `hits` for `query`: LLM reranker if configured, else `lexical_rerank`."""
    reranker = _llm_reranker()
    if reranker is None:
        return lexical_rerank(query=query, hits=hits, k=k)
    try:
        order = [str(pmid) for pmid in reranker(query, hits)]
    except Exception as exc:  # the LLM is an optional improvement; retrieval must not fail with it
        logger.warning("llm_rerank_failed", error=f"{type(exc).__name__}: {exc}")
        return lexical_rerank(query=query, hits=hits, k=k)
    by_pmid = {hit.pmid: hit for hit in hits}
    ranked: list[ChunkHit] = []
    for pmid in order:
        hit = by_pmid.pop(pmid, None)  # unknown or repeated PMIDs from the model are ignored
        if hit is not None:
            ranked.append(hit)
    ranked.extend(hit for hit in hits if hit.pmid in by_pmid)
    return ranked[:k]
