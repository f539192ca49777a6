"""Calibrate the evidence judgement (weight of semantic similarity, admission threshold) on PubMedQA.

Half of the 1,000 PubMedQA abstracts are stored (every PMID whose SHA-1 is even; the first
sentence of each abstract is its title, so a question never matches a title it came from), the
curated library is seeded, and each question runs through the answer pipeline's understand,
classify, retrieve and judge steps. For every candidate the judge's features are kept: semantic
similarity, concept coverage, and whether the condition and key concept are covered. A grid over
(semantic weight, threshold) is scored on the development questions (PMID SHA-1 not divisible by
3) and the chosen pair reported on the held-out third, with the clinician paraphrases in
benchmarks/data/paraphrases.json when present.

    .venv/bin/python benchmarks/calibrate_judgement.py [--limit N] [--reload]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (
    BASE_DIR,
    is_heldout,
    is_stored,
    load_summary,
    pubmedqa_records,
    setup_django,
    store_pubmedqa_half,
)

PARAPHRASES = BASE_DIR / "benchmarks" / "data" / "paraphrases.json"
WEIGHTS = [round(0.1 * step, 1) for step in range(0, 11)]
THRESHOLDS = [round(0.30 + 0.01 * step, 2) for step in range(0, 46)]


@dataclass
class Case:
    pmid: str
    question: str
    stored: bool
    heldout: bool
    # (doc_id, semantic, coverage, condition_ok and key_ok, is_gold, is_anchor)
    features: list[tuple[str, float, float, bool, bool, bool]]


def collect(questions: list[tuple[str, str]]) -> list[Case]:
    """Run each question to the judge step and keep every candidate's features."""
    from chat.answer_settings import answer_settings
    from chat.pipeline import judge
    from chat.pipeline.classify import classify_question
    from chat.pipeline.retrieve import library_lookup, search_abstracts
    from chat.pipeline.state import AnswerRun
    from chat.pipeline.understand import understand
    from evidence.sources import EvidenceSource

    settings = answer_settings(live_search=False, judge_threshold=0.0, judge_semantic_weight=0.5)
    anchors: set[str] = set()
    cases = []
    for pmid, question in questions:
        run = AnswerRun(question=question, settings=settings)
        understand(run)
        classify_question(run)
        library_lookup(run)
        search_abstracts(run)
        judgements = judge._judge_all(run)
        anchors = {EvidenceSource.from_study(study).doc_id for study in run.anchors}
        features = [
            (
                j.doc_id,
                j.semantic,
                j.coverage,
                not j.reason.startswith(("matches only", "does not")),
                j.doc_id == f"pmid:{pmid}",
                j.doc_id in anchors,
            )
            for j in judgements
        ]
        cases.append(Case(pmid, question, is_stored(pmid), is_heldout(pmid), features))
    return cases


def evaluate(cases: list[Case], weight: float, threshold: float) -> dict[str, float]:
    """Return present-cited, absent-answered and answered-precision if admission used (weight, threshold)."""
    present = [c for c in cases if c.stored]
    absent = [c for c in cases if not c.stored]

    def admitted(case: Case) -> list[str]:
        return [
            doc
            for doc, sem, cov, ok, _, anchor in case.features
            if ok and (anchor or weight * sem + (1 - weight) * cov >= threshold)
        ]

    cited = sum(1 for c in present if f"pmid:{c.pmid}" in admitted(c))
    answered_absent = sum(1 for c in absent if admitted(c))
    answered = [c for c in cases if admitted(c)]
    right = sum(1 for c in answered if f"pmid:{c.pmid}" in admitted(c))
    return {
        "present_cited": cited / len(present) if present else 0.0,
        "absent_answered": answered_absent / len(absent) if absent else 0.0,
        "answered_precision": right / len(answered) if answered else 0.0,
    }


def objective(metrics: dict[str, float]) -> float:
    """Favour citing the right abstract, penalise answering without it twice as much."""
    return metrics["present_cited"] - 2 * metrics["absent_answered"] + 0.5 * metrics["answered_precision"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N PubMedQA questions")
    parser.add_argument("--reload", action="store_true", help="reload the stored half even if present")
    parser.add_argument("--dump", type=Path, help="write every candidate's features to this JSON file")
    args = parser.parse_args()
    setup_django(database="medcite_bench_judgement")

    stored = store_pubmedqa_half(reload=args.reload)
    print(f"{stored} PubMedQA abstracts stored")
    _, questions = pubmedqa_records()
    print(load_summary())
    asked = [(q.pmid, q.question) for q in questions]
    if PARAPHRASES.exists():
        asked += [(row["pmid"], row["question"]) for row in json.loads(PARAPHRASES.read_text())["paraphrases"]]
    if args.limit:
        asked = asked[: args.limit]
    started = time.perf_counter()
    cases = collect(asked)
    print(f"judged {len(cases)} questions in {time.perf_counter() - started:.1f} s")
    if args.dump:
        args.dump.write_text(json.dumps([c.__dict__ for c in cases]))
    dev = [c for c in cases if not c.heldout]
    heldout = [c for c in cases if c.heldout]
    best = max(((w, t) for w in WEIGHTS for t in THRESHOLDS), key=lambda wt: objective(evaluate(dev, *wt)))
    print(f"chosen on {len(dev)} development questions: judge_semantic_weight={best[0]}, judge_threshold={best[1]}")
    for name, part in (("development", dev), ("held-out", heldout)):
        metrics = evaluate(part, *best)
        print(f"  {name:12} " + "  ".join(f"{key} {value:.3f}" for key, value in metrics.items()))


if __name__ == "__main__":
    main()
