"""What the claim judge reads and answers: passages of cited text, quotes, and the verdict on a claim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Passage(Protocol):
    """Stored text of one cited source chunk."""

    @property
    def doc_id(self) -> str: ...

    @property
    def chunk_id(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class PassageText:
    """A passage given by value (benchmarks, tests, callers without an evidence source object)."""

    doc_id: str
    chunk_id: str
    text: str


@dataclass(frozen=True)
class Quote:
    """One sentence of a cited source that supports a claim."""

    doc_id: str
    chunk_id: str
    quote: str


SUPPORTED = "supported"
CONTRADICTED = "contradicted"
NOT_ENOUGH_INFO = "not_enough_info"
VERDICTS = (SUPPORTED, CONTRADICTED, NOT_ENOUGH_INFO)


@dataclass(frozen=True)
class ClaimVerdict:
    """Whether a claim is supported, by which quoted sentences, and why not when it is not.

    `verdict` is one of `VERDICTS`: a claim its cited source contradicts is "contradicted" (its
    `support` then quotes the contradicting sentences), one it neither states nor contradicts is
    "not_enough_info". `score` is the verifier's probability for that verdict.
    """

    supported: bool
    support: list[Quote]
    reason: str
    similarity: float = 0.0
    verdict: str = ""
    score: float = 0.0

    def __post_init__(self) -> None:
        if not self.verdict:
            object.__setattr__(self, "verdict", SUPPORTED if self.supported else NOT_ENOUGH_INFO)
