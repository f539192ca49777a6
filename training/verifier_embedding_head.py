"""Measure a cheaper claim verifier: a classifier over the sentence embeddings the product already computes.

    python -m training.verifier_embedding_head      # under 2 min on the 2-core machine; writes nothing

Issue 22 asks for the (u, v, |u - v|, u * v) head over the embeddings to be measured beside the cross-encoder.
Each (claim, evidence) pair of the claim sets' train splits (with the rewritten twins, as the verifier's
fine-tuning reads them) is embedded by the product's embedder, claim and evidence alone, and a multinomial
logistic regression learns supported / contradicted / not enough information from the four vectors. It is
measured on the development pairs the verifier's fine-tuning reports (each claim against its gold evidence and
the hard negatives), 3-way accuracy where the label is exact, beside the figures the shipped cross-encoder's
build printed (`evidence/claims/model/README.md`). Nothing is written: the result is in that card.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from training.claimsets import CLAIM_SETS, NOT_ENOUGH_INFO, NOT_SUPPORTED, Pair, claim_pairs  # noqa: E402
from training.injection_semantic import product_embedder  # noqa: E402

SEED = 20261127


def features(pairs: list[Pair], embed) -> np.ndarray:
    texts = list(dict.fromkeys(text for pair in pairs for text in (pair.claim, pair.evidence)))
    vectors = dict(zip(texts, embed(texts), strict=True))
    claim = np.stack([vectors[pair.claim] for pair in pairs])
    evidence = np.stack([vectors[pair.evidence] for pair in pairs])
    return np.hstack([claim, evidence, np.abs(claim - evidence), claim * evidence])


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score

    started = time.monotonic()
    embed = product_embedder()
    train = [p for p in claim_pairs("train", contrast=True) if p.label != NOT_SUPPORTED]
    print(f"train pairs {len(train)}", flush=True)
    model = LogisticRegression(C=1.0, max_iter=3000, class_weight="balanced", random_state=SEED)
    model.fit(features(train, embed), [p.label for p in train])
    print(f"fitted in {time.monotonic() - started:.0f} s", flush=True)
    for dataset in CLAIM_SETS:
        dev = claim_pairs("dev", (dataset,))
        labels = np.array([p.label for p in dev])
        predicted = model.predict(features(dev, embed))
        exact = labels != NOT_SUPPORTED
        accuracy = float((predicted[exact] == labels[exact]).mean())
        # NOT_SUPPORTED (either of the last two) is right when the head does not say supported.
        binary = float(((predicted == 0) == (labels == 0)).mean())
        macro = f1_score(labels[exact], predicted[exact], average="macro", labels=[0, 1, NOT_ENOUGH_INFO])
        print(f"{dataset} dev: {len(dev)} pairs, 3-way accuracy {accuracy:.3f}, supported-vs-not {binary:.3f}, "
              f"3-way macro-F1 {macro:.3f}", flush=True)
    print(f"done in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
