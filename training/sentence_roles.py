"""Train the sentence-role model (`evidence.sentence_roles`): which part of an unlabelled abstract a sentence is.

    python -m training.sentence_roles           # train, print the validation figures, write sentence_role_model/
    python -m training.sentence_roles --check   # the same, printing the figures without writing anything

Data: PubMedQA's labelled abstracts (`../shared/data/pubmedqa/ori_pqal.json`, MIT), development PMIDs only (the
answer benchmarks' held-out third is never read here: `benchmarks/sentence_roles.py` measures on it). Each
abstract's labelled sections give its background (BACKGROUND, OBJECTIVE, PURPOSE, ...), methods (METHODS, DESIGN,
SETTING, PATIENTS, ...) and results (RESULTS, FINDINGS) sentences, and its conclusion (PubMedQA's long answer)
its conclusions sentences; a label that joins two parts ("METHODS AND RESULTS") is left out. The abstract is then
written without labels and chunked as the product stores an unstructured abstract (`pubmed.chunking`), so each
sentence is seen where the composer will see it. The development PMIDs are split by a fixed seed, 85 % to fit
and 15 % to validate. Multinomial logistic regression by full-batch Adam from zeros (deterministic).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evidence.sentence_roles import DIMENSION, MODEL_DIR, ROLES, WEIGHTS_FILE, feature_indices  # noqa: E402
from evidence.sentences import split_sentences  # noqa: E402
from pubmed.chunking import chunk_abstract  # noqa: E402
from training.claimsets import is_pubmedqa_heldout  # noqa: E402
from training.export import npz_model_command  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
_BACKGROUND = ("BACKGROUND", "INTRODUCTION", "OBJECTIVE", "PURPOSE", "AIM", "CONTEXT", "RATIONALE", "HYPOTHES",
               "IMPORTANCE", "GOAL", "QUESTION")
_RESULTS = ("RESULT", "FINDING", "OBSERVATION")
Example = tuple[str, int, int, int, bool]  # sentence, role, index in its chunk, sentences in the chunk, first chunk


@dataclass(frozen=True)
class TrainingSettings:
    seed: int = 20261127
    validation_share: float = 0.15
    steps: int = 600
    learning_rate: float = 0.05
    l2: float = 1e-6


def label_role(label: str) -> int | None:
    """Return the role of a PubMedQA section label, or None for a label that joins two parts."""
    label = label.upper()
    background, results = any(k in label for k in _BACKGROUND), any(k in label for k in _RESULTS)
    if results:
        return None if background or "METHOD" in label else ROLES.index("results")
    return ROLES.index("background") if background else ROLES.index("methods")


def abstract_examples(record: dict[str, object]) -> list[Example]:
    """Return one PubMedQA record's sentences with their roles, placed as an unlabelled stored abstract's are."""
    labelled: list[tuple[str, int | None]] = []
    for text, label in zip(record["CONTEXTS"], record["LABELS"], strict=True):  # type: ignore[call-overload]
        labelled += [(sentence, label_role(label)) for sentence in split_sentences(text)]
    labelled += [(sentence, ROLES.index("conclusions")) for sentence in split_sentences(str(record["LONG_ANSWER"]))]
    chunks = chunk_abstract(title="", sections=[], abstract=" ".join(sentence for sentence, _ in labelled))
    placed = [(chunk.ordinal == 0, index, len(parts))
              for chunk in chunks for parts in [split_sentences(chunk.text)] for index in range(len(parts))]
    if len(placed) != len(labelled):  # the chunks split a sentence differently: read it as one chunk
        placed = [(True, index, len(labelled)) for index in range(len(labelled))]
    return [(sentence, role, index, count, first)
            for (sentence, role), (first, index, count) in zip(labelled, placed, strict=True) if role is not None]


def examples(heldout: bool) -> list[Example]:
    """Return the examples of the development PMIDs (or, for the benchmark, of the held-out third)."""
    records = json.loads((SHARED / "pubmedqa" / "ori_pqal.json").read_text())
    return [example for pmid, record in sorted(records.items()) if is_pubmedqa_heldout(pmid) == heldout
            for example in abstract_examples(record)]


def _encode(rows: Sequence[Example]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (feature indices, their row, their value) for every example: binary features, L2-normalised."""
    found = [feature_indices(s, index=i, count=n, first_chunk=first) for s, _, i, n, first in rows]
    indices = np.concatenate(found)
    owners = np.repeat(np.arange(len(found)), [len(f) for f in found])
    values = np.concatenate([np.full(len(f), 1 / np.sqrt(max(len(f), 1)), dtype=np.float32) for f in found])
    return indices, owners, values


def _scores(weights: np.ndarray, bias: np.ndarray, encoded: tuple[np.ndarray, np.ndarray, np.ndarray],
            rows: int) -> np.ndarray:
    indices, owners, values = encoded
    scores = np.zeros((rows, len(ROLES)), dtype=np.float32)
    np.add.at(scores, owners, weights[indices] * values[:, None])
    return scores + bias


def fit(rows: Sequence[Example], settings: TrainingSettings) -> tuple[np.ndarray, np.ndarray]:
    """Fit multinomial logistic regression by full-batch Adam (each role weighted equally); return (weights, bias)."""
    encoded = _encode(rows)
    indices, owners, values = encoded
    labels = np.array([role for _, role, *_ in rows])
    counts = np.bincount(labels, minlength=len(ROLES))
    sample = (1.0 / (len(ROLES) * counts[labels])).astype(np.float32)
    target = np.eye(len(ROLES), dtype=np.float32)[labels]
    weights = np.zeros((DIMENSION, len(ROLES)), dtype=np.float32)
    bias = np.zeros(len(ROLES), dtype=np.float32)
    state = [np.zeros_like(weights), np.zeros_like(weights), np.zeros_like(bias), np.zeros_like(bias)]
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    for step in range(1, settings.steps + 1):
        scores = _scores(weights, bias, encoded, len(rows))
        probability = np.exp(scores - scores.max(axis=1, keepdims=True))
        probability /= probability.sum(axis=1, keepdims=True)
        error = (probability - target) * sample[:, None]
        gradient = np.zeros_like(weights)
        np.add.at(gradient, indices, error[owners] * values[:, None])
        gradient += settings.l2 * weights
        correction = np.sqrt(1 - beta2**step) / (1 - beta1**step)
        for parameter, grad, moment, velocity in ((weights, gradient, state[0], state[1]),
                                                  (bias, error.sum(axis=0), state[2], state[3])):
            moment *= beta1
            moment += (1 - beta1) * grad
            velocity *= beta2
            velocity += (1 - beta2) * grad**2
            parameter -= settings.learning_rate * correction * moment / (np.sqrt(velocity) + epsilon)
    return weights, bias


def figures(weights: np.ndarray, bias: np.ndarray, rows: Sequence[Example]) -> dict[str, float]:
    """Return accuracy and what the composer depends on: findings (results, conclusions) kept and background or
    methods sentences read as findings."""
    predicted = np.argmax(_scores(weights, bias, _encode(rows), len(rows)), axis=1)
    truth = np.array([role for _, role, *_ in rows])
    finding, read = truth >= ROLES.index("results"), predicted >= ROLES.index("results")
    return {
        "accuracy": round(float((predicted == truth).mean()), 4),
        "finding_precision": round(float((finding & read).sum() / max(read.sum(), 1)), 4),
        "finding_recall": round(float((finding & read).sum() / max(finding.sum(), 1)), 4),
        "background_read_as_finding": round(float(read[truth == 0].mean()), 4),
        "methods_read_as_finding": round(float(read[truth == 1].mean()), 4),
    }


def train(settings: TrainingSettings) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    started = time.monotonic()
    records = json.loads((SHARED / "pubmedqa" / "ori_pqal.json").read_text())
    pmids = sorted(pmid for pmid in records if not is_pubmedqa_heldout(pmid))
    random.Random(settings.seed).shuffle(pmids)
    cut = int(len(pmids) * (1 - settings.validation_share))
    fit_rows = [e for pmid in pmids[:cut] for e in abstract_examples(records[pmid])]
    check_rows = [e for pmid in pmids[cut:] for e in abstract_examples(records[pmid])]
    print(f"fit: {cut} abstracts, {len(fit_rows)} sentences; validation: {len(pmids) - cut} abstracts, "
          f"{len(check_rows)} sentences", flush=True)
    weights, bias = fit(fit_rows, settings)
    checked = figures(weights, bias, check_rows)
    print(f"validation: {checked} ({time.monotonic() - started:.0f} s)", flush=True)
    arrays = {"weights": weights.astype(np.float16), "bias": bias}
    metadata = {"settings": asdict(settings), "roles": list(ROLES), "fit_abstracts": cut,
                "fit_sentences": len(fit_rows), "validation": checked}
    return arrays, metadata


def main(argv: Sequence[str] | None = None) -> None:
    npz_model_command(
        argv,
        prog="python -m training.sentence_roles",
        doc=__doc__,
        train=lambda: train(TrainingSettings()),
        directory=MODEL_DIR,
        weights_file=WEIGHTS_FILE,
    )

if __name__ == "__main__":
    main()
