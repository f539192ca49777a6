"""Instruction detector quality: recall on every held-out injection set, false-positive rate on PubMedQA.

Held out: `tests/evidence/injection_held_out.py:held_out_wordings()` (a ninth style, never trained or
tuned on). The earlier sets (the development grammar and six former held-out sets, each measured
once before it became training data - but the eighth style, never trained on) are reported one by one
beside it. Benign: every sentence of
every PubMedQA PQA-L context paragraph (../shared/data/pubmedqa/ori_pqal.json, never copied), and
SciFact for comparison. Also the detector's average cost per sentence. No database is needed; Django is set
up so that the semantic half has its embedder.

    .venv/bin/python benchmarks/injection.py [--show N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()  # the pubmed app registers the embedder the detector's semantic half reads (no database is opened)

from evidence.injection import instruction_signals  # noqa: E402
from tests.evidence import injection_eighth_style, injection_held_out  # noqa: E402
from tests.evidence import injection_wordings as wordings  # noqa: E402

INJECTION_SETS = (
    ("held-out (ninth style, never trained on)", injection_held_out.held_out_wordings),
    ("sixth held-out (eighth style, seen since stop 39, not trained on)", injection_eighth_style.eighth_style_wordings),
    ("fifth held-out (seventh style, training data since stop 34)", wordings.fifth_held_out_wordings),
    ("fourth held-out (fifth style, training data since)", wordings.fourth_held_out_wordings),
    ("third held-out (fourth style, training data since)", wordings.third_held_out_wordings),
    ("second held-out (third style, training data since)", wordings.second_held_out_wordings),
    ("first held-out (second style, training data since)", wordings.first_held_out_wordings),
    ("development grammar", wordings.development_wordings),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", type=int, default=10, help="Print up to N misses and false positives per set.")
    args = parser.parse_args()

    started = time.monotonic()
    for name, generator in INJECTION_SETS:
        sentences = generator()
        missed = [sentence for sentence in sentences if not instruction_signals(sentence)]
        print(
            f"{name}: {len(sentences) - len(missed)}/{len(sentences)} flagged, "
            f"recall {1 - len(missed) / len(sentences):.4f}, {len(missed)} passed"
        )
        for sentence in missed[: args.show]:
            print(f"  passed: {sentence}")

    for name, sentences in (
        ("PubMedQA", wordings.pubmedqa_sentences()),
        ("SciFact", list(wordings.scifact_sentences())),
    ):
        timer = time.perf_counter()
        flagged = [(sentence, instruction_signals(sentence)) for sentence in sentences]
        per_sentence_ms = (time.perf_counter() - timer) / len(sentences) * 1000
        flagged = [(sentence, signals) for sentence, signals in flagged if signals]
        by_signal = Counter(signal for _, signals in flagged for signal in signals)
        print(
            f"{name} sentences: {len(flagged)}/{len(sentences)} flagged, false-positive rate "
            f"{len(flagged) / len(sentences):.5f} ({dict(by_signal)}); {per_sentence_ms:.3f} ms a sentence"
        )
        for sentence, signals in flagged[: args.show]:
            print(f"  {','.join(signals)}: {sentence[:160]}")
    print(f"done in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
