"""Answer or abstain on PubMedQA: does the product cite the right abstract, and abstain when it is absent?

Half of the 1,000 PubMedQA abstracts are stored (`benchmarks.common.is_stored`; first sentence as
title) next to the seeded library. Every question - the 1,000 PubMedQA questions, the clinician
paraphrases in benchmarks/data/paraphrases.json, and the shorthand set (each PubMedQA question that uses a phrase
its own abstract abbreviates by initials, "low back pain (LBP)", rewritten with the abbreviation:
`benchmarks.common.shorthand_question`, 219 questions) - goes through the product's own answer service with
no live search. Reported per split (development / held-out, by PMID):

- present-cited: questions whose abstract is stored and whose answer cites it;
- absent-answered / absent-GREEN: questions whose abstract is not stored that got a non-RED / GREEN answer;
- answered-precision: answers citing the right abstract / all answers that did not abstain;
- the confidence distribution and p50 / p95 latency per answer.

    .venv/bin/python benchmarks/answerability.py [--set pubmedqa|paraphrases|shorthand|all] [--limit N] [--json]
        [--reload] [--details FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (
    BASE_DIR,
    is_heldout,
    is_stored,
    load_summary,
    pubmedqa_records,
    setup_django,
    shorthand_question,
    store_pubmedqa_half,
)

PARAPHRASES = BASE_DIR / "benchmarks" / "data" / "paraphrases.json"
TARGETS = {
    "present_cited": (">=", 0.95),
    "absent_answered": ("<=", 0.05),
    "absent_green": ("<=", 0.0),
    "answered_precision": (">=", 0.95),
    "p95_seconds": ("<=", 1.0),
}


def metrics(rows: list[dict]) -> dict[str, float]:
    """Return the benchmark's numbers for answered rows ({pmid, stored, cited, confidence, seconds})."""
    present = [r for r in rows if r["stored"]]
    absent = [r for r in rows if not r["stored"]]
    answered = [r for r in rows if r["confidence"] != "RED"]
    seconds = sorted(r["seconds"] for r in rows)
    return {
        "questions": len(rows),
        "present_cited": sum(r["cited"] for r in present) / len(present) if present else 0.0,
        "absent_answered": sum(r["confidence"] != "RED" for r in absent) / len(absent) if absent else 0.0,
        "absent_green": sum(r["confidence"] == "GREEN" for r in absent) / len(absent) if absent else 0.0,
        "answered_precision": sum(r["cited"] for r in answered) / len(answered) if answered else 0.0,
        "green": sum(r["confidence"] == "GREEN" for r in rows),
        "yellow": sum(r["confidence"] == "YELLOW" for r in rows),
        "red": sum(r["confidence"] == "RED" for r in rows),
        "p50_seconds": statistics.median(seconds) if seconds else 0.0,
        "p95_seconds": seconds[max(0, int(0.95 * len(seconds)) - 1)] if seconds else 0.0,
    }


def _details(set_name: str, question: str, pmid: str, result) -> dict:
    """Return what explains one answer: the judgement of the question's own abstract and what was cited."""
    judge = next((step for step in result.trace if step.get("step") == "judge"), {})
    judgements = judge.get("data", {}).get("judgements", [])
    own = next((j for j in judgements if j["doc_id"] == f"pmid:{pmid}"), None)
    return {
        "set": set_name,
        "question": question,
        "own_judgement": own and {k: own[k] for k in ("semantic", "coverage", "score", "addresses", "reason")},
        "cited_pmids": [reference.get("pmid") for reference in result.references],
        "abstention": result.abstention,
        "confidence_reasons": result.confidence_reasons,
    }


def verdicts(numbers: dict[str, float]) -> dict[str, str]:
    """Return PASS / FAIL per target."""
    out = {}
    for key, (op, target) in TARGETS.items():
        value = numbers[key]
        out[key] = "PASS" if (value >= target if op == ">=" else value <= target) else "FAIL"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["pubmedqa", "paraphrases", "shorthand", "all"], default="all")
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N questions of each set")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--reload", action="store_true", help="store the abstracts again even if present")
    parser.add_argument("--details", type=Path, help="write one JSON line per question (its abstract's judgement)")
    args = parser.parse_args()
    setup_django(database="medcite_bench_judgement")

    from chat.answer_settings import answer_settings
    from chat.pipeline import answer_question

    stored = store_pubmedqa_half(reload=args.reload)
    records, questions = pubmedqa_records()
    sets: dict[str, list[tuple[str, str]]] = {}
    if args.set in ("pubmedqa", "all"):
        sets["pubmedqa"] = [(q.pmid, q.question) for q in questions]
    if args.set in ("paraphrases", "all"):
        sets["paraphrases"] = [(r["pmid"], r["question"]) for r in json.loads(PARAPHRASES.read_text())["paraphrases"]]
    if args.set in ("shorthand", "all"):
        abstracts = {record.pmid: record.abstract for record in records}
        rewritten = [(q.pmid, shorthand_question(q.question, abstracts[q.pmid])) for q in questions]
        sets["shorthand"] = [(pmid, question) for pmid, question in rewritten if question]
    settings = answer_settings(live_search=False)
    report: dict[str, dict] = {}
    for name, asked in sets.items():
        rows = []
        for pmid, question in asked[: args.limit or None]:
            started = time.perf_counter()
            result = answer_question(question=question, settings=settings)
            rows.append(
                {
                    **(_details(name, question, pmid, result) if args.details else {}),
                    "pmid": pmid,
                    "stored": is_stored(pmid),
                    "heldout": is_heldout(pmid),
                    "cited": any(reference.get("pmid") == pmid for reference in result.references),
                    "confidence": result.confidence,
                    "seconds": time.perf_counter() - started,
                }
            )
        if args.details:
            with args.details.open("a") as handle:
                handle.writelines(json.dumps(row) + "\n" for row in rows)
        for split, part in (
            ("development", [r for r in rows if not r["heldout"]]),
            ("held-out", [r for r in rows if r["heldout"]]),
            ("all", rows),
        ):
            numbers = metrics(part)
            report[f"{name}/{split}"] = {**numbers, "verdicts": verdicts(numbers)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"Answer-or-abstain on PubMedQA ({stored} of 1,000 abstracts stored, no live search); {load_summary()}")
    for key, numbers in report.items():
        print(
            f"{key:26} n={numbers['questions']:4}  present-cited {numbers['present_cited']:.3f}  "
            f"absent-answered {numbers['absent_answered']:.3f}  absent-GREEN {numbers['absent_green']:.3f}  "
            f"answered-precision {numbers['answered_precision']:.3f}  G/Y/R {numbers['green']}/{numbers['yellow']}/"
            f"{numbers['red']}  p50/p95 {numbers['p50_seconds'] * 1000:.0f}/{numbers['p95_seconds'] * 1000:.0f} ms  "
            + " ".join(f"{k}:{v}" for k, v in numbers["verdicts"].items())
        )


if __name__ == "__main__":
    main()
