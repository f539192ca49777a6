"""The part of an abstract a sentence belongs to when the abstract has no section labels.

A structured abstract says which sentences are its background, methods, results and conclusions ("RESULTS: ...");
an unstructured one does not, and "Statins have been shown to reduce stroke" reads, word for word, like a finding.
This model reads each sentence of an unlabelled abstract chunk with where it stands (its place in the chunk, and
whether the chunk opens the abstract) and names its part, so the extractive composer quotes results and
conclusions, never background or methods, from unstructured abstracts too (`evidence.abstract_sections`).

Multinomial logistic regression over hashed word uni- and bigrams, the opening word and position tokens,
trained on the section labels of PubMedQA's development abstracts (`python -m training.sentence_roles`; model
card in `sentence_role_model/MODEL_CARD.md`). numpy only; about 0.05 ms a sentence.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

import numpy as np

from evidence.model_files import checked_arrays

ROLES = ("background", "methods", "results", "conclusions")
DIMENSION = 2**18
MODEL_DIR = Path(__file__).resolve().parent / "sentence_role_model"
WEIGHTS_FILE = "weights.npz"
REBUILD = "rebuild it with `python -m training.sentence_roles`"
_WORD = re.compile(r"[a-z0-9%<>=\u2264\u2265]+")
_DIGIT = re.compile(r"\d")
_BANDS = 5  # a sentence's place in its chunk, in fifths


class SentenceRoleModelError(RuntimeError):
    """The shipped sentence-role weights are missing or are not the file their metadata names."""


def feature_indices(sentence: str, *, index: int, count: int, first_chunk: bool) -> np.ndarray:
    """Return the hashed features of the sentence at `index` of a chunk of `count` sentences."""
    words = [_DIGIT.sub("0", word) for word in _WORD.findall(sentence.lower())]
    band = min(_BANDS - 1, int(index / max(count, 1) * _BANDS))
    tokens = [
        *words,
        *(f"{left} {right}" for left, right in pairwise(words)),
        f"^{words[0] if words else ''}",
        f"@band{band}",
        f"@first{index == 0}",
        f"@last{index == count - 1}",
        f"@chunk{first_chunk}",
        f"@chunk{first_chunk}band{band}",
    ]
    return np.fromiter((zlib.crc32(token.encode()) % DIMENSION for token in tokens), dtype=np.int64)


class SentenceRoles:
    """The shipped model: weights (DIMENSION x 4) and a bias per role."""

    def __init__(self, weights: np.ndarray, bias: np.ndarray) -> None:
        self.weights = weights.astype(np.float32)
        self.bias = bias.astype(np.float32)

    @classmethod
    def load(cls, directory: Path = MODEL_DIR) -> SentenceRoles:
        recorded = directory / "metadata.json"
        metadata = json.loads(recorded.read_text()) if recorded.exists() else {}
        arrays = checked_arrays(directory / WEIGHTS_FILE, metadata.get("sha256"), SentenceRoleModelError, REBUILD)
        return cls(arrays["weights"], arrays["bias"])

    def scores(self, indices: np.ndarray) -> np.ndarray:
        """Return the four roles' scores for one sentence's feature indices (binary values, L2-normalised)."""
        if not len(indices):
            return self.bias.copy()
        return self.weights[indices].sum(axis=0) / np.sqrt(len(indices)) + self.bias

    def roles(self, sentences: Sequence[str], *, first_chunk: bool) -> list[str]:
        """Return the role of each sentence of one unlabelled chunk, in order."""
        count = len(sentences)
        return [
            ROLES[int(np.argmax(self.scores(feature_indices(s, index=i, count=count, first_chunk=first_chunk))))]
            for i, s in enumerate(sentences)
        ]


@lru_cache(maxsize=1)
def sentence_roles() -> SentenceRoles:
    """Return the shipped model, read once per process."""
    return SentenceRoles.load()
