"""Claim verifier quality: the trained model with its exact checks against the similarity baseline, and cost.

Two kinds of labelled claims, neither copied into the repository:

- PubMedQA perturbations, generated here from ../shared/data/pubmedqa/ori_pqal.json: each abstract's
  conclusion (LONG_ANSWER) is a supported claim for its CONTEXTS (one passage per section); unsupported
  variants are the conclusion with one number changed, its direction reversed, its negation flipped, or
  judged against the topically nearest other abstract. PMIDs are split (fixed seed) in halves; everything
  is reported on the held-out half. The verifier's training rewrites claims in a similar way
  (training/contrast.py, on the claim sets, not on PubMedQA), so these figures flatter it.
- The public claim sets (training/claimsets.py), each claim judged against the whole abstract it cites,
  on their test splits (`--public test`, never read by training or calibration).

The baseline, from the same run, is the verifier MedCite had before: a sentence (or two) with cosine ≥ 0.63
to the claim that passes the exact checks. Also prints ALCE-style citation recall/precision of fake-LLM
answers built from the held-out abstracts.

    .venv/bin/python benchmarks/faithfulness.py [--limit N] [--seed 12]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import SHARED_DATA, load_summary, setup_django
from evidence.claims.verdicts import PassageText as Passage

_ANTONYMS = {
    "increased": "decreased",
    "decreased": "increased",
    "increase": "decrease",
    "decrease": "increase",
    "increases": "decreases",
    "decreases": "increases",
    "higher": "lower",
    "lower": "higher",
    "reduced": "increased",
    "reduces": "increases",
    "reduce": "increase",
    "reduction": "increase",
    "improved": "worsened",
    "improves": "worsens",
    "improve": "worsen",
    "more": "less",
    "less": "more",
    "fewer": "more",
    "greater": "smaller",
    "longer": "shorter",
    "shorter": "longer",
    "elevated": "reduced",
    "raised": "lowered",
    "lowered": "raised",
    "better": "worse",
    "worse": "better",
}
_REMOVE_NEGATION = [
    (r"\b(does|did|do|is|was|are|were|could|should|may|might|will|would) not\b", r"\1"),
    (r"\bcannot\b", "can"),
    (r"\bno significant\b", "a significant"),
    (r"\bnot\b ?", ""),
    (r"\bno\b", "a"),
]
_ADD_NEGATION = [
    (r"\b(is|are|was|were|may|might|should|could|would|will|does|did)\b", r"\1 not"),
    (r"\bcan\b", "cannot"),
]


@dataclass(frozen=True)
class Case:
    pmid: str
    kind: str  # "supported", "number", "direction", "negation", "attribution"
    claim: str
    passages: tuple[Passage, ...]

    @property
    def supported(self) -> bool:
        return self.kind == "supported"


def _number_variant(claim: str, source: str, rng: random.Random) -> str:
    from evidence.claims import numbers_in
    from evidence.claims.numbers import readings_in

    candidates = [n for n in numbers_in(claim) if n.text[0].isdigit() or n.text[0] == "."]
    if not candidates:
        return ""
    number = rng.choice(candidates)
    taken = readings_in(source) | readings_in(claim)
    decimals = len(number.text.split(".")[1].rstrip("% ")) if "." in number.text else 0
    for factor in rng.sample([0.5, 0.6, 0.7, 1.3, 1.5, 2.0, 3.0], 7):
        value = round(number.value * factor, decimals) if decimals else round(number.value * factor)
        value = value if value != number.value else number.value + 1
        text = f"{value:.{decimals}f}" + ("%" if number.percent else "")
        if not frozenset({round(float(value), 6), round(float(value) / 100, 6), round(float(value) * 100, 6)}) & taken:
            return claim[: number.start] + text + claim[number.start + len(number.text) :]
    return ""


def _direction_variant(claim: str) -> str:
    for match in re.finditer(r"[A-Za-z]+", claim):
        word = match.group(0)
        if word.lower() in _ANTONYMS:
            swapped = _ANTONYMS[word.lower()]
            swapped = swapped.capitalize() if word[0].isupper() else swapped
            return claim[: match.start()] + swapped + claim[match.end() :]
    return ""


def _negation_variant(claim: str) -> str:
    for pattern, replacement in _REMOVE_NEGATION + _ADD_NEGATION:
        flipped = re.sub(pattern, replacement, claim, count=1, flags=re.IGNORECASE)
        if flipped != claim:
            return flipped
    return ""


def build_cases(embed, *, seed: int, limit: int) -> tuple[list[Case], list[Case]]:
    """Return (development cases, held-out cases) generated from PubMedQA, split by PMID."""
    data = json.loads((SHARED_DATA / "pubmedqa" / "ori_pqal.json").read_text())
    pmids = sorted(data)[: limit or None]
    passages = {
        pmid: tuple(
            Passage(f"pmid:{pmid}", str(i), " ".join(text.split())) for i, text in enumerate(data[pmid]["CONTEXTS"])
        )
        for pmid in pmids
    }
    vectors = embed([" ".join(p.text for p in passages[pmid]) for pmid in pmids])
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -1.0)
    rng = random.Random(seed)
    cases: dict[str, list[Case]] = {}
    for row, pmid in enumerate(pmids):
        claim = " ".join(data[pmid]["LONG_ANSWER"].split())
        source = " ".join(p.text for p in passages[pmid])
        own = passages[pmid]
        cases[pmid] = [Case(pmid, "supported", claim, own)]
        for kind, variant in (
            ("number", _number_variant(claim, source, rng)),
            ("direction", _direction_variant(claim)),
            ("negation", _negation_variant(claim)),
        ):
            if variant and variant != claim:
                cases[pmid].append(Case(pmid, kind, variant, own))
        nearest = pmids[int(np.argmax(similarity[row]))]
        cases[pmid].append(Case(pmid, "attribution", claim, passages[nearest]))
    order = list(pmids)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return [c for p in order[:half] for c in cases[p]], [c for p in order[half:] for c in cases[p]]


def _rates(cases: list[Case], accepted: list[bool]) -> tuple[float, float]:
    """Return (precision at rejecting unsupported claims, recall of supported claims)."""
    rejected = [c for c, ok in zip(cases, accepted, strict=True) if not ok]
    precision = sum(not c.supported for c in rejected) / len(rejected) if rejected else 1.0
    supported = [ok for c, ok in zip(cases, accepted, strict=True) if c.supported]
    return precision, sum(supported) / len(supported)


def _cite_each(text: str, marker: str) -> str:
    """Return `text` with `marker` before the full stop of each sentence, as a model citing every sentence writes."""
    from evidence.sentences import split_sentences

    return " ".join(re.sub(r"([.!?]?)$", lambda m: f" {marker}{m.group(1)}", s, count=1) for s in split_sentences(text))


def _whole(passages: tuple[Passage, ...]) -> list[Passage]:
    """Return an abstract's sections as one citable source (one line per section)."""
    return [Passage(passages[0].doc_id, "all", "\n".join(p.text for p in passages))]


def citation_scenarios(cases: list[Case], embed) -> dict[str, tuple[float, float, int]]:
    """Return ALCE citation (recall, precision, claims) of fake-LLM answers built from held-out abstracts."""
    from evidence.claims import citation_metrics

    by_pmid: dict[str, dict[str, Case]] = {}
    for case in cases:
        by_pmid.setdefault(case.pmid, {})[case.kind] = case
    faithful, wrong_source, extra_citation, changed_number = [], [], [], []
    for group in by_pmid.values():
        supported, attributed = group["supported"], group["attribution"]
        own, other = _whole(supported.passages), _whole(attributed.passages)
        faithful.append((_cite_each(supported.claim, "[1]"), own))
        wrong_source.append((_cite_each(supported.claim, "[1]"), other))
        extra_citation.append((_cite_each(supported.claim, "[1][2]"), own + other))
        if "number" in group:
            both = _cite_each(supported.claim, "[1]") + "\n\n" + _cite_each(group["number"].claim, "[1]")
            changed_number.append((both, own))
    results = {}
    for name, answers in (
        ("faithful", faithful),
        ("wrong source cited", wrong_source),
        ("right + unrelated citation", extra_citation),
        ("true claim + same claim with a changed number", changed_number),
    ):
        metrics = citation_metrics(answers, embed=embed)
        results[name] = (metrics.citation_recall, metrics.citation_precision, metrics.claims)
    return results


def public_sets(split: str) -> None:
    """Print the verifier's figures on each public claim set's `split`, beside the similarity baseline."""
    from evidence.claims import get_verifier_model
    from training import claimsets
    from training.evaluation import VERDICT_INDEX, case_scores, figures, model_verdict, similarity_verdict

    model = get_verifier_model()
    print(f"\npublic claim sets, {split} split (claim judged against the whole abstract it cites):")
    print(
        "| set | verifier | cases | support recall | contradicted → supported | not supported → supported "
        "| NEI → supported | macro-F1 | cost p50 / p95 ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in claimsets.CLAIM_SETS:
        cases = claimsets.cases(name, split)
        scored = case_scores(cases, model)
        gold = [case.label for case in cases]
        costs = [item.milliseconds for item in scored]
        cost = f"{np.percentile(costs, 50):.1f} / {np.percentile(costs, 95):.1f}"
        rows = {
            "similarity ≥ 0.63 + exact checks (before)": [VERDICT_INDEX[similarity_verdict(i.scored)] for i in scored],
            "trained model + exact checks (shipped)": [
                VERDICT_INDEX[
                    model_verdict(item.scored, model.config.support_threshold, model.config.contradict_threshold)
                ]
                for item in scored
            ],
        }
        for label, predicted in rows.items():
            f = figures(gold, predicted)
            f1 = f.get("macro_f1_3way", f.get("macro_f1_2way"))
            kind = "3-way" if "macro_f1_3way" in f else "2-way"
            print(
                f"| {name} | {label} | {f['cases']} | {f.get('support_recall', float('nan')):.3f} "
                f"| {_fmt(f, 'contradicted_judged_supported')} | {_fmt(f, 'not_supported_judged_supported')} "
                f"| {_fmt(f, 'nei_judged_supported')} | {f1:.3f} ({kind}) | {cost if 'shipped' in label else '-'} |"
            )


def _fmt(figures: dict, key: str) -> str:
    return f"{figures[key]:.3f}" if key in figures else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N PubMedQA abstracts")
    parser.add_argument("--seed", type=int, default=12, help="seed for the PMID split and the perturbations")
    parser.add_argument(
        "--public",
        choices=["test", "dev", "none"],
        default="test",
        help="public claim sets' split to report (test: held out from training and calibration)",
    )
    args = parser.parse_args()
    setup_django(database="medcite_bench_faithfulness")

    from evidence.claims import PassageCache, decide, get_verifier_model, score_claim
    from pubmed.embeddings import get_embedder
    from training.evaluation import similarity_verdict

    embedder = get_embedder()
    embed = embedder.embed
    model = get_verifier_model()
    print(
        f"claim verifier benchmark — verifier {model.config.path} (support ≥ {model.config.support_threshold:.3f}, "
        f"contradicted ≥ {model.config.contradict_threshold:.3f}); embedder {embedder.spec.name}, "
        f"{embedder.backend}; {load_summary()}"
    )
    _, held_out = build_cases(embed, seed=args.seed, limit=args.limit)
    kinds = Counter(c.kind for c in held_out)
    print(f"PubMedQA perturbations, held-out half: {len(held_out)} cases ({dict(kinds)})")

    cache = PassageCache()
    verdicts, baseline, timings, reasons = [], [], [], Counter()
    for case in held_out:
        for passage in case.passages:  # sources are embedded when stored: the cost below is the verifier's
            cache.get(passage, embed)
        started = time.perf_counter()
        scored = score_claim(case.claim, case.passages, embed=embed, model=model, cache=cache)
        verdict = decide(
            scored,
            support_threshold=model.config.support_threshold,
            contradict_threshold=model.config.contradict_threshold,
        )
        timings.append((time.perf_counter() - started) * 1000)
        verdicts.append(verdict.verdict)
        baseline.append(similarity_verdict(scored))
        if not verdict.supported:
            reasons[re.sub(r"[\d.]+|the number \S+|^\S+ is not|: .*", "#", verdict.reason)[:60]] += 1
    accepted = [v == "supported" for v in verdicts]
    precision, recall = _rates(held_out, accepted)
    base_precision, base_recall = _rates(held_out, [v == "supported" for v in baseline])
    print(
        f"\ntrained model + exact checks: precision at rejecting unsupported claims {precision:.3f} (similarity "
        f"baseline {base_precision:.3f}); recall of supported claims {recall:.3f} (baseline {base_recall:.3f})"
    )
    print("| claim kind | cases | model: judged supported | model: judged contradicted | baseline: judged supported |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("supported", "number", "direction", "negation", "attribution"):
        rows = [(v, b) for c, v, b in zip(held_out, verdicts, baseline, strict=True) if c.kind == kind]
        n = len(rows)
        shares = [
            sum(v == "supported" for v, _ in rows),
            sum(v == "contradicted" for v, _ in rows),
            sum(b == "supported" for _, b in rows),
        ]
        print(f"| {kind} | {n} | " + " | ".join(f"{share / n:.3f}" for share in shares) + " |")
    p50, p95 = np.percentile(timings, 50), np.percentile(timings, 95)
    print(
        f"verifier cost per claim (sources already embedded; claim embedding, unit choice and the model): "
        f"p50 {p50:.1f} ms, p95 {p95:.1f} ms"
    )
    print("rejection reasons:", dict(reasons.most_common(6)))

    print("\nALCE-style citation metrics of fake-LLM answers (held-out abstracts):")
    print("| scenario | claims | citation recall | citation precision |")
    print("|---|---:|---:|---:|")
    for name, (rec, prec, count) in citation_scenarios(held_out, embed).items():
        print(f"| {name} | {count} | {rec:.3f} | {prec:.3f} |")
    if args.public != "none":
        public_sets(args.public)
    print(f"\n{load_summary()}")


if __name__ == "__main__":
    main()
