"""Train the instruction classifier: logistic regression over hashed n-grams and sentence shapes (numpy only).

    python -m training.injection            # train, pick the threshold, write evidence/injection_model/
    python -m training.injection --check    # the same, printing the figures without writing anything

Positives are the project's own injection wordings that are no longer held out (the development
grammar, the prose development style and the five earlier held-out sets,
`tests/evidence/injection_wordings.py`); negatives are real abstract sentences and their clauses (the
detector scores a sentence and each of its clauses, `evidence.injection_classifier.clauses`): the SciFact
corpus, the Citation-Integrity corpus and the Check-COVID corpus (../shared/data, never copied). Each
positive is also learnt without its lead-in (`augmented`). Benign documents are split by a fixed
seed: 85 % train, 15 % to choose the threshold - the lowest score at which at most
`max_validation_fpr` of those sentences (scored as the detector scores them) are flagged. Before the
final fit, a style check trains without the latest former held-out set and reports recall on it, so
the model card says how well the classifier carries over to a wording style it never saw. PubMedQA and
the current held-out set are never read here: `benchmarks/injection.py` measures on them.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evidence.injection_classifier import MODEL_DIR, clauses, feature_indices, normalised  # noqa: E402
from tests.evidence import injection_wordings as wordings  # noqa: E402
from training.export import file_sha256  # noqa: E402
from training.injection_semantic import product_embedder, product_embedder_file, train_semantic  # noqa: E402


@dataclass(frozen=True)
class TrainingSettings:
    """Every hyper-parameter of the instruction classifier."""

    seed: int = 20251125
    epochs: int = 200
    learning_rate: float = 0.05
    l2: float = 1e-5
    positive_weight_share: float = 0.5  # the positives' share of the total sample weight
    validation_share: float = 0.15  # SciFact documents held back to choose the threshold
    max_validation_fpr: float = 0.0005


_LEAD = re.compile(r"[:,;\u2014-]\s+")


def augmented(positives: Sequence[str]) -> list[str]:
    """Return the positives plus, for each, what follows its lead-in ("SYSTEM:", "Assistant,") on its own.

    The instruction without its address still reads as one; learning it bare keeps the classifier from
    leaning on the few lead-ins the wordings use.
    """
    found = dict.fromkeys(positives)
    for sentence in positives:
        parts = _LEAD.split(sentence, maxsplit=1)
        if len(parts) == 2 and len(parts[1].split()) >= 4:
            found.setdefault(parts[1][0].upper() + parts[1][1:], None)
    return list(found)


@dataclass(frozen=True)
class TrainedModel:
    """The classifier as shipped: float16 weights, bias, threshold, and how it was made."""

    weights: np.ndarray
    bias: float
    threshold: float
    metadata: dict[str, object]


def _encode(sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (indices, values, offsets) of the L2-normalised binary feature vectors, CSR-style."""
    indices, values, offsets = [], [], [0]
    for sentence in sentences:
        found = feature_indices(sentence)
        indices.append(found)
        values.append(np.full(len(found), 1.0 / np.sqrt(max(len(found), 1)), dtype=np.float32))
        offsets.append(offsets[-1] + len(found))
    return np.concatenate(indices), np.concatenate(values), np.asarray(offsets, dtype=np.int64)


def _scores(weights: np.ndarray, bias: float, encoded: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    indices, values, offsets = encoded
    products = weights[indices] * values
    sums = np.add.reduceat(products, offsets[:-1]) if len(products) else np.zeros(len(offsets) - 1)
    sums[np.diff(offsets) == 0] = 0.0
    return sums + bias


def fit(
    positives: Sequence[str], negatives: Sequence[str], settings: TrainingSettings, dimension: int
) -> tuple[np.ndarray, float]:
    """Fit weighted logistic regression by full-batch Adam; return (weights, bias)."""
    encoded = _encode([*positives, *negatives])
    labels = np.concatenate([np.ones(len(positives)), np.zeros(len(negatives))]).astype(np.float32)
    share = settings.positive_weight_share
    sample_weight = np.where(labels == 1, share / len(positives), (1 - share) / len(negatives)).astype(np.float32)
    indices, values, offsets = encoded
    rows = np.repeat(np.arange(len(labels)), np.diff(offsets))
    weights = np.zeros(dimension, dtype=np.float32)
    bias = 0.0
    moment, velocity = np.zeros_like(weights), np.zeros_like(weights)
    bias_moment = bias_velocity = 0.0
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    for step in range(1, settings.epochs + 1):
        probability = 1.0 / (1.0 + np.exp(-_scores(weights, bias, encoded)))
        error = (probability - labels) * sample_weight
        gradient = np.bincount(indices, weights=values * error[rows], minlength=dimension).astype(np.float32)
        gradient += settings.l2 * weights
        bias_gradient = float(error.sum())
        moment = beta1 * moment + (1 - beta1) * gradient
        velocity = beta2 * velocity + (1 - beta2) * gradient**2
        correction = np.sqrt(1 - beta2**step) / (1 - beta1**step)
        weights -= settings.learning_rate * correction * moment / (np.sqrt(velocity) + epsilon)
        bias_moment = beta1 * bias_moment + (1 - beta1) * bias_gradient
        bias_velocity = beta2 * bias_velocity + (1 - beta2) * bias_gradient**2
        bias -= settings.learning_rate * correction * bias_moment / (np.sqrt(bias_velocity) + epsilon)
    return weights, bias


def _benign_documents() -> list[list[str]]:
    """Return the benign abstracts, each as its title (where it has one) and sentences."""
    claims = wordings.SHARED_DATA / "claims"
    documents = []
    for corpus in ("scifact/corpus.jsonl", "citation_integrity/corpus.jsonl", "check_covid/corpus.json"):
        with (claims / corpus).open() as lines:  # one JSON record a line, SciFact's schema
            documents += [[record["title"], *record["abstract"]] for record in map(json.loads, lines)]
    return [[sentence for sentence in document if sentence and sentence.strip()] for document in documents]


def _benign_split(settings: TrainingSettings) -> tuple[list[str], list[str]]:
    """Return the benign sentences split by document into (train, validation)."""
    rng = random.Random(settings.seed)
    train: list[str] = []
    validation: list[str] = []
    for document in _benign_documents():
        target = validation if rng.random() < settings.validation_share else train
        target.extend(document)
    return train, validation


def _parts(sentences: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Return every sentence's clauses (the sentence first, as the detector scores them) and where each starts."""
    parts: list[str] = []
    starts = []
    for sentence in sentences:
        starts.append(len(parts))
        parts.extend(clauses(normalised(sentence).lower()))
    return parts, np.asarray(starts, dtype=np.int64)


def _sentence_scores(weights: np.ndarray, bias: float, sentences: Sequence[str]) -> np.ndarray:
    """Return each sentence's score as the detector computes it: the highest of the sentence and its clauses."""
    parts, starts = _parts(sentences)
    return np.maximum.reduceat(_scores(weights, bias, _encode(parts)), starts) if parts else np.zeros(0)


def _with_clauses(sentences: Sequence[str]) -> list[str]:
    """Return benign sentences and their clauses: a clause of an ordinary sentence is ordinary too."""
    return _parts(sentences)[0]


def _threshold(scores: np.ndarray, max_fpr: float) -> float:
    """Return the lowest threshold that flags at most `max_fpr` of the benign `scores`."""
    allowed = int(max_fpr * len(scores))
    ordered = np.sort(scores)[::-1]
    return float(ordered[allowed] + 1e-4)


def _positive_sets() -> tuple[list[str], list[str], list[str]]:
    """Return the positives: the development wordings, the earlier former held-out sets, and the latest one."""
    development = [*wordings.development_wordings(), *wordings.development_prose_wordings()]
    earlier = [
        *wordings.first_held_out_wordings(),
        *wordings.second_held_out_wordings(),
        *wordings.third_held_out_wordings(),
        *wordings.fourth_held_out_wordings(),
    ]
    return development, earlier, wordings.fifth_held_out_wordings()


def train(settings: TrainingSettings, *, dimension: int) -> TrainedModel:
    """Run the style check and the final fit; return the model."""
    started = time.monotonic()
    development, earlier, latest = _positive_sets()
    benign_train, benign_validation = _benign_split(settings)
    negatives = _with_clauses(benign_train)
    print(f"positives: development {len(development)}, earlier held-out sets {len(earlier)}, latest {len(latest)}")
    print(
        f"benign sentences: train {len(benign_train)} ({len(negatives)} with their clauses), "
        f"validation {len(benign_validation)}"
    )

    weights, bias = fit(augmented([*development, *earlier]), negatives, settings, dimension)
    threshold = _threshold(_sentence_scores(weights, bias, benign_validation), settings.max_validation_fpr)
    style_recall = float((_sentence_scores(weights, bias, latest) >= threshold).mean())
    print(f"style check (trained without the latest former held-out set): recall on it {style_recall:.3f}")

    learnt = [*development, *earlier, *latest]
    positives = augmented(learnt)
    weights, bias = fit(positives, negatives, settings, dimension)
    validation_scores = _sentence_scores(weights, bias, benign_validation)
    threshold = _threshold(validation_scores, settings.max_validation_fpr)
    validation_fpr = float((validation_scores >= threshold).mean())
    train_recall = float((_sentence_scores(weights, bias, learnt) >= threshold).mean())
    print(f"threshold {threshold:.4f}: benign validation FPR {validation_fpr:.5f}, training recall {train_recall:.3f}")
    print(f"trained in {time.monotonic() - started:.0f} s")
    return TrainedModel(
        weights=weights.astype(np.float16),
        bias=bias,
        threshold=threshold,
        metadata={
            "settings": asdict(settings),
            "dimension": dimension,
            "positives": len(positives),
            "negatives": len(negatives),
            "style_check_recall": round(style_recall, 4),
            "benign_validation_fpr": round(validation_fpr, 6),
            "benign_validation_sentences": len(benign_validation),
            "training_recall": round(train_recall, 4),
        },
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.injection", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="Train and print the figures; write nothing.")
    args = parser.parse_args(argv)
    from evidence.injection_classifier import DIMENSION

    settings = TrainingSettings()
    model = train(settings, dimension=DIMENSION)
    benign_train, benign_validation = _benign_split(settings)
    # As shipped (float16) and as the detector scores a sentence: the gate is a score the detector computes.
    shipped = model.weights.astype(np.float32)
    semantic_arrays, semantic_metadata = train_semantic(
        positives=[sentence for positives in _positive_sets() for sentence in positives],
        benign_train=benign_train,
        benign_validation=benign_validation,
        lexical_scores=lambda sentences: _sentence_scores(shipped, model.bias, sentences),
        embed=product_embedder(),
    )
    if args.check:
        return
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        MODEL_DIR / "weights.npz",
        weights=model.weights,
        bias=np.float32(model.bias),
        threshold=np.float32(model.threshold),
    )
    np.savez_compressed(MODEL_DIR / "semantic.npz", allow_pickle=False, **semantic_arrays)
    semantic_metadata["sha256"] = file_sha256(MODEL_DIR / "semantic.npz")
    semantic_metadata["embedder"] = product_embedder_file()
    metadata = {**model.metadata, "semantic": semantic_metadata}
    (MODEL_DIR / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
    print(f"wrote {MODEL_DIR / 'weights.npz'}, semantic.npz and metadata.json")


if __name__ == "__main__":
    main()
