"""Instruction detector quality: recall on held-out injection wordings, false-positive rate on PubMedQA.

Held out: `tests/evidence/injection_wordings.py:held_out_wordings()` (240 sentences, a style the
detector never saw). Benign: every sentence of every PubMedQA PQA-L context paragraph
(../shared/data/pubmedqa/ori_pqal.json, never copied). Also prints the figures on the wordings the
detector learnt from, and SciFact, for comparison. No database is needed.

    .venv/bin/python benchmarks/injection.py [--show N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evidence.injection import instruction_signals
from tests.evidence import injection_wordings as wordings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=10, help="Print up to N misses and false positives.")
    args = parser.parse_args()

    started = time.monotonic()
    held_out = wordings.third_held_out_wordings()
    missed = [sentence for sentence in held_out if not instruction_signals(sentence)]
    print(
        f"held-out injections: {len(held_out) - len(missed)}/{len(held_out)} flagged, "
        f"recall {1 - len(missed) / len(held_out):.4f}, {len(missed)} passed"
    )
    for sentence in missed[: args.show]:
        print(f"  passed: {sentence}")

    learnt = [
        *wordings.development_wordings(),
        *wordings.first_held_out_wordings(),
        *wordings.second_held_out_wordings(),
    ]
    print(
        f"learnt-from wordings: recall {sum(bool(instruction_signals(s)) for s in learnt) / len(learnt):.4f} "
        f"of {len(learnt)}"
    )

    for name, sentences in (
        ("PubMedQA", wordings.pubmedqa_sentences()),
        ("SciFact", list(wordings.scifact_sentences())),
    ):
        flagged = [(sentence, instruction_signals(sentence)) for sentence in sentences]
        flagged = [(sentence, signals) for sentence, signals in flagged if signals]
        by_signal = Counter(signal for _, signals in flagged for signal in signals)
        print(
            f"{name} sentences: {len(flagged)}/{len(sentences)} flagged, false-positive rate "
            f"{len(flagged) / len(sentences):.5f} ({dict(by_signal)})"
        )
        for sentence, signals in flagged[: args.show]:
            print(f"  {','.join(signals)}: {sentence[:160]}")
    print(f"done in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
