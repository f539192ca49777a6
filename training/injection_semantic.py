"""Train the semantic half of the instruction detector (`evidence.injection_semantic`); run by
`python -m training.injection` after the lexical classifier.

Logistic regression over the sentence embedding of the product's embedder (MiniLM, `pubmed.embeddings`), fitted
by full-batch Adam from zeros (deterministic). Only sentences the lexical classifier scores at least `gate` are
ever embedded by the detector, so it learns from those: every positive, and the benign training sentences past
the gate. The gate is the lexical score that `gate_benign_share` of the benign validation sentences reach (the
embedding cost: about 3 % of ordinary sentences); the threshold lets at most `max_validation_fpr` of all benign
validation sentences through, a budget of its own beside the lexical classifier's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class SemanticSettings:
    """Every hyper-parameter of the semantic classifier."""

    gate_benign_share: float = 0.03
    max_validation_fpr: float = 0.0002
    steps: int = 500
    learning_rate: float = 0.05
    l2: float = 1e-4
    positive_weight_share: float = 0.5


def product_embedder() -> Callable[[Sequence[str]], np.ndarray]:
    """Return the embedder the detector is given (`pubmed.embeddings.embed_cached`: each text embedded alone, so
    a sentence gets the vector it gets in the product whatever it is batched with)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from pubmed.embeddings import embed_cached

    return lambda texts: np.asarray(embed_cached(list(texts)), dtype=np.float32)


def product_embedder_file() -> dict[str, str]:
    """Return the backend and sha256 of the embedding model file the vectors come from, for the metadata.

    The ONNX export is written on each machine (`pubmed.onnx_export`); the semantic half is only the model it
    was measured as when the machine's export has these bytes (tests/evidence/test_injection_semantic.py)."""
    from pubmed.embeddings import get_embedder
    from training.export import file_sha256

    embedder = get_embedder()
    path = getattr(embedder, "model_path", None)
    return {"backend": embedder.backend, "sha256": file_sha256(path) if path else ""}


def fit_dense(positives: np.ndarray, negatives: np.ndarray, settings: SemanticSettings) -> tuple[np.ndarray, float]:
    """Fit weighted logistic regression on dense vectors by full-batch Adam; return (weights, bias)."""
    vectors = np.vstack([positives, negatives]).astype(np.float64)
    labels = np.concatenate([np.ones(len(positives)), np.zeros(len(negatives))])
    share = settings.positive_weight_share
    sample_weight = np.where(labels == 1, share / len(positives), (1 - share) / len(negatives))
    weights, bias = np.zeros(vectors.shape[1]), 0.0
    moment, velocity = np.zeros_like(weights), np.zeros_like(weights)
    bias_moment = bias_velocity = 0.0
    for step in range(1, settings.steps + 1):
        error = (1.0 / (1.0 + np.exp(-(vectors @ weights + bias))) - labels) * sample_weight
        gradient = vectors.T @ error + settings.l2 * weights
        bias_gradient = float(error.sum())
        correction = np.sqrt(1 - 0.999**step) / (1 - 0.9**step)
        moment = 0.9 * moment + 0.1 * gradient
        velocity = 0.999 * velocity + 0.001 * gradient**2
        weights -= settings.learning_rate * correction * moment / (np.sqrt(velocity) + 1e-8)
        bias_moment = 0.9 * bias_moment + 0.1 * bias_gradient
        bias_velocity = 0.999 * bias_velocity + 0.001 * bias_gradient**2
        bias -= settings.learning_rate * correction * bias_moment / (np.sqrt(bias_velocity) + 1e-8)
    return weights.astype(np.float32), float(bias)


def train_semantic(
    *,
    positives: Sequence[str],
    benign_train: Sequence[str],
    benign_validation: Sequence[str],
    lexical_scores: Callable[[Sequence[str]], np.ndarray],
    embed: Callable[[Sequence[str]], np.ndarray],
    settings: SemanticSettings | None = None,
) -> tuple[dict[str, Any], dict[str, object]]:
    """Return the arrays of `semantic.npz` (weights, bias, threshold, gate) and its metadata."""
    settings = settings or SemanticSettings()
    started = time.monotonic()
    validation_lexical = lexical_scores(benign_validation)
    gate = float(np.quantile(validation_lexical, 1 - settings.gate_benign_share))
    train_lexical = lexical_scores(benign_train)
    negatives = [s for s, score in zip(benign_train, train_lexical, strict=True) if score >= gate]
    gated_validation = [s for s, score in zip(benign_validation, validation_lexical, strict=True) if score >= gate]
    print(
        f"semantic: gate {gate:.3f} (lexical score); embedding {len(positives)} positives, {len(negatives)} gated "
        f"benign training and {len(gated_validation)} gated validation sentences",
        flush=True,
    )
    positive_vectors = embed(positives)
    weights, bias = fit_dense(positive_vectors, embed(negatives), settings)
    validation = np.sort(embed(gated_validation) @ weights + bias)[::-1]
    allowed = int(settings.max_validation_fpr * len(benign_validation))
    threshold = float(validation[allowed] + 1e-4) if allowed < len(validation) else float(validation[-1] - 1e-4)
    validation_fpr = float((validation >= threshold).sum() / len(benign_validation))
    train_recall = float((positive_vectors @ weights + bias >= threshold).mean())
    print(
        f"semantic: threshold {threshold:.3f}: benign validation FPR {validation_fpr:.5f}, training recall "
        f"{train_recall:.3f} ({time.monotonic() - started:.0f} s)",
        flush=True,
    )
    arrays = {
        "weights": weights,
        "bias": np.float32(bias),
        "threshold": np.float32(threshold),
        "gate": np.float32(gate),
    }
    metadata = {
        "settings": asdict(settings),
        "positives": len(positives),
        "gated_negatives": len(negatives),
        "benign_validation_fpr": round(validation_fpr, 6),
        "training_recall": round(train_recall, 4),
    }
    return arrays, metadata
