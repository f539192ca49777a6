"""Rerank retrieved hits down to k: LLM scores, a local cross-encoder, or the lexical reranker.

`rerank_hits` picks the reranker and reports which one ran:
- "llm" when a `JsonCompleter` is given: the model scores every candidate 0-10 in schema-validated
  JSON; candidates it left unscored keep their retrieval order after the scored ones;
- "cross-encoder" when `RERANKER_MODEL` names a local sentence-transformers cross-encoder directory;
- "lexical" otherwise, and whenever the chosen reranker fails: the fused retrieval rank blended
  with IDF-weighted query coverage (title matches counting extra), no model needed.
Hybrid search calls it without a completer (no LLM call per search); the Evidence Scout passes the
configured LLM's completer when there is one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any, Generic, Protocol, TypeVar

import structlog
from django.conf import settings

from evidence import language
from pubmed.prompts import RERANK_SCHEMA, JsonCompleter, checked_reply, rerank_prompt


class Rankable(Protocol):
    """What a reranker reads of a hit (hybrid search's `ChunkHit`, for one)."""

    @property
    def pmid(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def text(self) -> str: ...


ChunkHit = TypeVar("ChunkHit", bound=Rankable)

logger = structlog.get_logger(__name__)

# Weight of query coverage against the retrieval rank prior in the default reranker.
COVERAGE_WEIGHT = 0.5
TITLE_BONUS = 0.5

_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")
_ENDING = re.compile(r"(?:ies|es|s|ing|ed)$")


@lru_cache(maxsize=32768)
def _light_stem(word: str) -> str:
    # A light stem (plural/-ing/-ed) so "statins" matches "statin" without a stemmer dependency.
    return _ENDING.sub("", word) if len(word) > 4 else word


def _terms(text: str) -> list[str]:
    grammar = language.words(language.WordClass.GRAMMAR)
    return [_light_stem(word) for word in _WORD.findall(text.lower()) if word not in grammar and len(word) > 1]


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


@dataclass(frozen=True)
class RerankOutcome(Generic[ChunkHit]):
    """The reranked hits, which reranker ordered them, and why a better one did not (if it did not)."""

    hits: list[ChunkHit]
    method: str  # "llm" | "cross-encoder" | "lexical"
    note: str = ""
    scores: dict[str, float] = field(default_factory=dict)


def _order_by_scores(hits: Sequence[ChunkHit], scores: dict[str, float], k: int) -> list[ChunkHit]:
    """Scored hits best first (ties keep retrieval order), then unscored hits in retrieval order."""
    ranked = sorted((hit for hit in hits if hit.pmid in scores), key=lambda hit: -scores[hit.pmid])
    ranked += [hit for hit in hits if hit.pmid not in scores]
    return ranked[:k]


def llm_scores(*, query: str, hits: Sequence[ChunkHit], complete: JsonCompleter) -> dict[str, float]:
    """Return the model's 0-10 score per candidate PMID; PMIDs it invented or repeated are ignored."""
    records = [(hit.pmid, hit.title, hit.text) for hit in hits]
    reply = checked_reply(complete, rerank_prompt(query=query, records=records), RERANK_SCHEMA)
    candidates = {hit.pmid for hit in hits}
    scores: dict[str, float] = {}
    for item in reply["scores"]:
        if item["pmid"] in candidates and item["pmid"] not in scores:
            scores[item["pmid"]] = float(item["score"])
    if not scores:
        raise ValueError("the model scored none of the candidates")
    return scores


@cache
def _cross_encoder(path: str) -> Any:
    from sentence_transformers import CrossEncoder

    return CrossEncoder(path, device=str(getattr(settings, "EMBEDDING_DEVICE", "cpu")), local_files_only=True)


def cross_encoder_scores(*, query: str, hits: Sequence[ChunkHit], model_path: str) -> dict[str, float]:
    """Return the local cross-encoder's score for (query, title + passage) of each hit."""
    model = _cross_encoder(model_path)
    pairs = [(query, f"{hit.title} {hit.text}".strip()) for hit in hits]
    values = model.predict(pairs, show_progress_bar=False)
    return {hit.pmid: float(value) for hit, value in zip(hits, values, strict=True)}


def rerank_hits(
    *, query: str, hits: Sequence[ChunkHit], k: int, complete: JsonCompleter | None = None
) -> RerankOutcome[ChunkHit]:
    """Return the k best of `hits` for `query` and the reranker that chose them (see the module docstring)."""
    model_path = str(getattr(settings, "RERANKER_MODEL", "") or "")
    note = ""
    if complete is not None and hits:
        try:
            scores = llm_scores(query=query, hits=hits, complete=complete)
            return RerankOutcome(_order_by_scores(hits, scores, k), "llm", scores=scores)
        except Exception as exc:  # an optional improvement: ranking must not fail with it
            note = f"LLM reranker failed ({type(exc).__name__}: {exc})"
            logger.warning("llm_rerank_failed", error=f"{type(exc).__name__}: {exc}")
    if model_path and hits:
        try:
            scores = cross_encoder_scores(query=query, hits=hits, model_path=model_path)
            return RerankOutcome(_order_by_scores(hits, scores, k), "cross-encoder", note=note, scores=scores)
        except Exception as exc:
            note = "; ".join(filter(None, [note, f"cross-encoder failed ({type(exc).__name__}: {exc})"]))
            logger.warning("cross_encoder_rerank_failed", error=f"{type(exc).__name__}: {exc}")
    return RerankOutcome(lexical_rerank(query=query, hits=hits, k=k), "lexical", note=note)
