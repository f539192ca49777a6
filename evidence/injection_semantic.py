"""The semantic half of the instruction detector: logistic regression over a sentence's embedding.

The lexical classifier (`evidence.injection_classifier`) reads character and word n-grams: a wording style it
never saw (captions "for summarisers", dictated replies, appeals to the reader) can share few of them with the
styles it learnt. This model reads what the sentence means - the registered sentence embedder's vector
(`evidence.embedding`, the MiniLM model search uses) - and was trained on the same positives and benign abstract
sentences (`python -m training.injection`; weights in `injection_model/semantic.npz`, card in
`injection_model/MODEL_CARD.md`).

Embedding every screened sentence would cost milliseconds each, so the lexical score gates it: only a sentence
the lexical classifier already scores at least `gate` (a bar about 3 % of benign abstract sentences reach) is
embedded. Without a registered embedder (a script that set up no Django apps) this half flags nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from evidence.embedding import registered_embedder
from evidence.injection_classifier import MODEL_DIR, normalised
from evidence.model_files import checked_arrays

SEMANTIC_FILE = "semantic.npz"


class SemanticModelError(RuntimeError):
    """The shipped semantic weights are missing or are not the ones `metadata.json` names."""


@dataclass(frozen=True)
class SemanticClassifier:
    """Weights over the embedding, the decision threshold, and the lexical score that gates embedding."""

    weights: np.ndarray
    bias: float
    threshold: float
    gate: float

    @classmethod
    def load(cls, directory: Path = MODEL_DIR) -> SemanticClassifier:
        """Load the weights, refusing a file whose sha256 differs from the one `metadata.json` records."""
        metadata = directory / "metadata.json"
        recorded = json.loads(metadata.read_text()).get("semantic", {}).get("sha256") if metadata.exists() else None
        stored = checked_arrays(
            directory / SEMANTIC_FILE, recorded, SemanticModelError, "rebuild them with `python -m training.injection`"
        )
        return cls(
            stored["weights"].astype(np.float32),
            float(stored["bias"]),
            float(stored["threshold"]),
            float(stored["gate"]),
        )

    def score(self, vector: np.ndarray) -> float:
        return float(np.asarray(vector, dtype=np.float32) @ self.weights + self.bias)


@lru_cache(maxsize=1)
def semantic_classifier() -> SemanticClassifier:
    """Return the shipped semantic classifier (loaded once)."""
    return SemanticClassifier.load()


def semantic_flags(sentence: str, lexical_score: float) -> bool:
    """Return True when the sentence's meaning reads as an instruction (only for sentences past the gate)."""
    model = semantic_classifier()
    embed = registered_embedder()
    if embed is None or lexical_score < model.gate:
        return False
    return model.score(np.asarray(embed([normalised(sentence)]))[0]) >= model.threshold
