"""How the sentence-role model (`evidence.sentence_roles`) reads abstracts it never learnt from.

The held-out third of PubMedQA (by the answer benchmarks' split; `training.sentence_roles` reads only the other
two thirds): each labelled abstract is written without its labels and chunked as an unstructured abstract is
stored, and each sentence's part (background, methods, results, conclusions) is compared with its label. The
baseline from the same run is what the extractive composer did before the model with an unlabelled sentence
(`chat.providers.composer.is_finding` with no section: every sentence a finding unless it reads as methods).
Prints accuracy (model only), and for both: the share of quoted candidates that are findings (precision), the
share of findings kept (recall), and the shares of background and methods sentences offered as findings; and the
model's cost per sentence.

    .venv/bin/python benchmarks/sentence_roles.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import django
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()  # the composer's imports read the app registry (no database is opened)

from chat.providers.composer import is_finding  # noqa: E402
from evidence.sentence_roles import ROLES, feature_indices, sentence_roles  # noqa: E402
from training.sentence_roles import examples  # noqa: E402


def _shares(truth: np.ndarray, read: np.ndarray) -> str:
    finding = truth >= ROLES.index("results")
    precision = (finding & read).sum() / max(read.sum(), 1)
    recall = (finding & read).sum() / max(finding.sum(), 1)
    return (f"finding precision {precision:.3f}, recall {recall:.3f}; background offered {read[truth == 0].mean():.3f},"
            f" methods offered {read[truth == 1].mean():.3f}")


def main() -> None:
    rows = examples(heldout=True)
    model = sentence_roles()
    truth = np.array([role for _, role, *_ in rows])
    started = time.perf_counter()
    predicted = np.array([
        int(np.argmax(model.scores(feature_indices(s, index=i, count=n, first_chunk=first))))
        for s, _, i, n, first in rows
    ])
    cost = (time.perf_counter() - started) / len(rows) * 1000
    rule = np.array([is_finding(sentence, "") for sentence, *_ in rows])
    print(f"PubMedQA held-out third: {len(rows)} sentences, {np.bincount(truth, minlength=4).tolist()} by role {ROLES}")
    print(f"  before (composer rule): {_shares(truth, rule)}")
    print(f"  model: accuracy {(predicted == truth).mean():.3f}; {_shares(truth, predicted >= 2)}; "
          f"{cost:.3f} ms a sentence")
    for role, name in enumerate(ROLES):
        kept = truth == role
        print(f"    {name}: {(predicted[kept] == role).mean():.3f} read right")


if __name__ == "__main__":
    main()
