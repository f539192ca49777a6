"""ALCE-style citation recall and precision of answers, judged claim by claim with `judge_claim`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evidence.claims.judge import Embed, PassageCache, judge_claim
from evidence.claims.splitting import split_claims
from evidence.claims.verdicts import Passage


@dataclass(frozen=True)
class CitationMetrics:
    """Claim and citation counts with the two ALCE ratios (0.0 when there is nothing to count)."""

    claims: int
    supported_claims: int
    citations: int
    precise_citations: int

    @property
    def citation_recall(self) -> float:
        return self.supported_claims / self.claims if self.claims else 0.0

    @property
    def citation_precision(self) -> float:
        return self.precise_citations / self.citations if self.citations else 0.0


def cited_passages(citation: str, sources: Sequence[Passage]) -> list[Passage]:
    """Return the sources a citation names: '3' is the third source; 'pmid:123' or 'pmid:123:0' by id."""
    if citation.isdecimal():
        number = int(citation)
        return [sources[number - 1]] if 0 < number <= len(sources) else []
    exact = [s for s in sources if f"{s.doc_id}:{s.chunk_id}" == citation]
    return exact or [s for s in sources if s.doc_id == citation]


def citation_metrics(
    answers: Sequence[tuple[str, Sequence[Passage]]],
    *,
    embed: Embed,
    threshold: float | None = None,
) -> CitationMetrics:
    """Return citation recall and precision over (answer text, its numbered sources) pairs.

    Recall: share of claims supported by the union of their citations (uncited claims count as
    unsupported). Precision, as in ALCE: a citation of a supported claim is precise when it supports
    the claim alone or the others do not support it without it; citations of unsupported claims are not.
    """
    claims = supported = citations = precise = 0
    cache = PassageCache()
    for text, sources in answers:
        for claim in split_claims(text):
            if claim.dangling:
                continue
            claims += 1
            cited = {c: cited_passages(c, sources) for c in claim.citations}
            citations += len(cited)
            union = [p for passages in cited.values() for p in passages]
            if not union or not judge_claim(claim.text, union, embed=embed, threshold=threshold, cache=cache).supported:
                continue
            supported += 1
            for citation, passages in cited.items():
                others = [p for c, ps in cited.items() if c != citation for p in ps]
                alone = (
                    bool(passages)
                    and judge_claim(claim.text, passages, embed=embed, threshold=threshold, cache=cache).supported
                )
                needed = (
                    not others
                    or not judge_claim(claim.text, others, embed=embed, threshold=threshold, cache=cache).supported
                )
                precise += alone or needed
    return CitationMetrics(claims, supported, citations, precise)
