"""Does a question read as clinical? Logistic regression over its sentence embedding, trained here.

The answer pipeline says "This does not look like a clinical question" only when nothing in the question is a
known condition, decision, drug shape or abbreviation and nothing stored is close to it. A clinical question in
words the vocabulary does not know ("tamsulosin for ureteric stones - does it help passage?") passed all of
those tests. This model reads what the question means - the registered sentence embedder's vector
(`evidence.embedding`, the MiniLM model search uses) - and was trained on public biomedical questions and claims
against general English sentences (`python -m training.clinical_question`; weights in
`clinical_question_model/weights.npz`, card in `clinical_question_model/MODEL_CARD.md`). It can only keep a
question from being called non-clinical, never call one so: without a registered embedder it reads nothing as
clinical, and the pipeline's other tests decide alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from evidence.embedding import registered_embedder
from evidence.model_files import checked_arrays

MODEL_DIR = Path(__file__).resolve().parent / "clinical_question_model"
WEIGHTS_FILE = "weights.npz"
REBUILD = "rebuild them with `python -m training.clinical_question`"


class ClinicalQuestionModelError(RuntimeError):
    """The shipped weights are missing or are not the ones `metadata.json` names."""


@dataclass(frozen=True)
class ClinicalQuestionModel:
    """Weights over the question's embedding and the score at or above which it reads as clinical."""

    weights: np.ndarray
    bias: float
    threshold: float

    @classmethod
    def load(cls, directory: Path = MODEL_DIR) -> ClinicalQuestionModel:
        """Load the weights, refusing a file whose sha256 differs from the one `metadata.json` records."""
        metadata = directory / "metadata.json"
        recorded = json.loads(metadata.read_text()).get("sha256") if metadata.exists() else None
        stored = checked_arrays(directory / WEIGHTS_FILE, recorded, ClinicalQuestionModelError, REBUILD)
        return cls(stored["weights"].astype(np.float32), float(stored["bias"]), float(stored["threshold"]))

    def score(self, vector: np.ndarray) -> float:
        return float(np.asarray(vector, dtype=np.float32) @ self.weights + self.bias)


@lru_cache(maxsize=1)
def clinical_question_model() -> ClinicalQuestionModel:
    """Return the shipped model (loaded once)."""
    return ClinicalQuestionModel.load()


def reads_clinical(question: str) -> bool:
    """Return True when the question's meaning reads as a clinical or biomedical question."""
    embed = registered_embedder()
    if embed is None or not question.strip():
        return False
    model = clinical_question_model()
    return model.score(np.asarray(embed([question]))[0]) >= model.threshold
