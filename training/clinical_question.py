"""Train the clinical-question model (`evidence.clinical_question`): logistic regression over the question embedding.

    python -m training.clinical_question           # train, choose the threshold, write clinical_question_model/
    python -m training.clinical_question --check   # the same, printing the figures without writing anything

Clinical (positive): PubMedQA questions of the development PMIDs (the held-out third by the answer benchmarks'
split is never read), SciFact train claims and Check-COVID claims, from ../shared/data. General (negative):
MultiNLI dev and SNLI dev sentences - every MultiNLI sentence written as a question, and a seeded sample of the
rest. Each side is split by a fixed seed, 85 % to fit and 15 % to choose the threshold: the score that keeps
`clinical_recall` of the clinical validation texts (a clinical question wrongly called non-clinical is the error
this model exists to prevent). Fitted by full-batch Adam from zeros (`training.injection_semantic.fit_dense`,
deterministic). The project's own question sets (clinician, golden, paraphrases) and its non-clinical
questions (`benchmarks/data/nonclinical_questions.json`) are never read here: `benchmarks/clinical_question.py`
measures on them.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evidence.clinical_question import MODEL_DIR, WEIGHTS_FILE  # noqa: E402
from training.claimsets import is_pubmedqa_heldout  # noqa: E402
from training.export import npz_model_command  # noqa: E402
from training.injection_semantic import SemanticSettings, fit_dense, product_embedder, product_embedder_file  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
_FIT_FIELDS = ("steps", "learning_rate", "l2", "positive_weight_share")  # what `fit_dense` reads of its settings


@dataclass(frozen=True)
class TrainingSettings:
    """Every choice of the build besides the fit's (`fit`)."""

    seed: int = 20261127
    general_sample: int = 4000  # general sentences that are not questions, beside every MultiNLI question
    validation_share: float = 0.15
    clinical_recall: float = 0.99
    fit: SemanticSettings = field(
        default_factory=lambda: SemanticSettings(steps=800, learning_rate=0.05, l2=1e-4, positive_weight_share=0.5)
    )


def clinical_texts() -> list[str]:
    pubmedqa = json.loads((SHARED / "pubmedqa" / "ori_pqal.json").read_text())
    texts = [record["QUESTION"] for pmid, record in pubmedqa.items() if not is_pubmedqa_heldout(pmid)]
    texts += [json.loads(line)["claim"] for line in (SHARED / "claims" / "scifact" / "claims_train.jsonl").open()]
    for split in ("train", "dev"):
        for path in sorted((SHARED / "claims" / "check_covid" / split).glob("*.json*")):
            for line in path.open():
                if line.strip() and (claim := json.loads(line).get("claim")):
                    texts.append(claim)
    return list(dict.fromkeys(" ".join(text.split()) for text in texts if text.strip()))


def general_texts(settings: TrainingSettings) -> list[str]:
    sentences: dict[str, None] = {}
    for line in (SHARED / "nli" / "pairs.jsonl").open():
        record = json.loads(line)
        if record["source"] in ("mnli_dev", "snli_dev"):
            for text in (record["premise"], record["hypothesis"]):
                sentences.setdefault(" ".join(text.split()), None)
    questions = [text for text in sentences if text.endswith("?")]
    others = [text for text in sentences if not text.endswith("?") and text]
    random.Random(settings.seed).shuffle(others)
    return questions + others[: settings.general_sample]


def _split(texts: Sequence[str], settings: TrainingSettings) -> tuple[list[str], list[str]]:
    shuffled = list(texts)
    random.Random(settings.seed).shuffle(shuffled)
    cut = int(len(shuffled) * (1 - settings.validation_share))
    return shuffled[:cut], shuffled[cut:]


def train(settings: TrainingSettings) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    started = time.monotonic()
    embed = product_embedder()
    clinical_fit, clinical_check = _split(clinical_texts(), settings)
    general_fit, general_check = _split(general_texts(settings), settings)
    print(f"clinical: fit {len(clinical_fit)}, validation {len(clinical_check)}; "
          f"general: fit {len(general_fit)}, validation {len(general_check)}", flush=True)
    weights, bias = fit_dense(embed(clinical_fit), embed(general_fit), settings.fit)
    clinical_scores = embed(clinical_check) @ weights + bias
    general_scores = embed(general_check) @ weights + bias
    threshold = float(np.quantile(clinical_scores, 1 - settings.clinical_recall))
    recall = float((clinical_scores >= threshold).mean())
    general_kept = float((general_scores < threshold).mean())
    print(f"threshold {threshold:.3f}: clinical validation recall {recall:.4f}, general validation read as "
          f"non-clinical {general_kept:.4f} ({time.monotonic() - started:.0f} s)", flush=True)
    arrays = {"weights": weights, "bias": np.float32(bias), "threshold": np.float32(threshold)}
    metadata = {
        "settings": {**asdict(settings), "fit": {k: v for k, v in asdict(settings.fit).items() if k in _FIT_FIELDS}},
        "clinical_fit": len(clinical_fit),
        "general_fit": len(general_fit),
        "clinical_validation_recall": round(recall, 4),
        "general_validation_non_clinical": round(general_kept, 4),
    }
    return arrays, metadata


def main(argv: Sequence[str] | None = None) -> None:
    def trained() -> tuple[dict, dict[str, object]]:
        arrays, metadata = train(TrainingSettings())
        return arrays, {**metadata, "embedder": product_embedder_file()}

    npz_model_command(
        argv,
        prog="python -m training.clinical_question",
        doc=__doc__,
        train=trained,
        directory=MODEL_DIR,
        weights_file=WEIGHTS_FILE,
    )

if __name__ == "__main__":
    main()
