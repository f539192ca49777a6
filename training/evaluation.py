"""Judge the public claim-set cases with the product's verifier and score the verdicts.

Used by calibration (`training/export.py`, development splits only) and by
`benchmarks/faithfulness.py --public` (held-out test splits). The cases' abstracts are embedded
with the product's embedder and judged by `evidence.claims.score_claim` / `decide`, exactly as an
answer's claims are, so the figures are the product's and not the bare model's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from training.claimsets import CONTRADICTED, NOT_ENOUGH_INFO, NOT_SUPPORTED, SUPPORTED, Case

VERDICT_INDEX = {"supported": SUPPORTED, "contradicted": CONTRADICTED, "not_enough_info": NOT_ENOUGH_INFO}
THREE_WAY = ("scifact", "check_covid")  # sets whose every label is exact (the others have "not supported")


@dataclass(frozen=True)
class Scored:
    case: Case
    scored: object  # evidence.claims.ScoredClaim
    milliseconds: float


def case_scores(cases: Sequence[Case], model, embed: Callable | None = None) -> list[Scored]:
    """Score every case's candidate sentences once (the expensive part); thresholds are applied later."""
    from evidence.claims import PassageCache, PassageText, score_claim

    if embed is None:
        from pubmed.embeddings import embed_cached as embed
    cache = PassageCache()
    out = []
    for case in cases:
        passage = PassageText(doc_id=case.case_id.split(":")[-1], chunk_id="abstract", text=case.passage)
        started = time.perf_counter()
        scored = score_claim(case.claim, [passage], embed=embed, model=model, cache=cache)
        out.append(Scored(case, scored, (time.perf_counter() - started) * 1000))
    return out


def model_verdict(scored, support: float, contradict: float) -> str:
    """The trained model's verdict on a scored claim: contradicted where a unit's contradiction probability
    reaches `contradict` and exceeds the best support; supported where a unit's support probability reaches
    `support` and the exact checks hold (`evidence.claims.judge.supported_by`); else not enough information."""
    from evidence.claims.judge import CONTRADICTED as C
    from evidence.claims.judge import NOT_ENOUGH_INFO as N
    from evidence.claims.judge import supported_by

    if scored.problem or not scored.candidates:
        return N
    candidates = scored.candidates
    supporting = sorted((c for c in candidates if c.probabilities[0] >= support), key=lambda c: -c.probabilities[0])
    best = supporting[0].probabilities[0] if supporting else 0.0
    against = max(candidates, key=lambda c: c.probabilities[1])
    if against.probabilities[1] >= contradict and against.probabilities[1] > best:
        return C
    if supporting:
        return supported_by(scored, supporting, supporting[0].similarity).verdict
    return N


def rules_verdict(scored) -> str:
    """The product's verdict (`evidence.claims.decide`: similarity, numbers, direction and negation, names)."""
    from evidence.claims import SIMILARITY_THRESHOLD, decide

    return decide(scored, support_threshold=SIMILARITY_THRESHOLD, contradict_threshold=1.0).verdict


def verdicts(scored: Sequence[Scored], support: float, contradict: float) -> list[int]:
    return [VERDICT_INDEX[model_verdict(s.scored, support, contradict)] for s in scored]


def _f1(gold: np.ndarray, predicted: np.ndarray, label: int) -> float:
    tp = float(((gold == label) & (predicted == label)).sum())
    fp = float(((gold != label) & (predicted == label)).sum())
    fn = float(((gold == label) & (predicted != label)).sum())
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def figures(gold_labels: Sequence[int], predicted_labels: Sequence[int]) -> dict[str, float]:
    """Support recall, false-support rates, macro-F1 (3-way where labels are exact, else supported-vs-not)."""
    gold, predicted = np.array(gold_labels), np.array(predicted_labels)

    def rate(mask: np.ndarray) -> float:
        return round(float((predicted[mask] == SUPPORTED).mean()), 3) if mask.any() else float("nan")

    out = {
        "cases": len(gold),
        "support_recall": rate(gold == SUPPORTED),
        "contradicted_judged_supported": rate(gold == CONTRADICTED),
        "not_supported_judged_supported": rate(gold == NOT_SUPPORTED),
        "nei_judged_supported": rate(gold == NOT_ENOUGH_INFO),
    }
    if (gold == NOT_SUPPORTED).any():
        binary_gold, binary_pred = (gold == SUPPORTED).astype(int), (predicted == SUPPORTED).astype(int)
        out["macro_f1_2way"] = round((_f1(binary_gold, binary_pred, 1) + _f1(binary_gold, binary_pred, 0)) / 2, 3)
    else:
        out["macro_f1_3way"] = round(sum(_f1(gold, predicted, label) for label in range(3)) / 3, 3)
        out["contradicted_recall"] = (
            round(float((predicted[gold == CONTRADICTED] == CONTRADICTED).mean()), 3)
            if (gold == CONTRADICTED).any()
            else float("nan")
        )
    return {k: v for k, v in out.items() if not (isinstance(v, float) and np.isnan(v))}


def macro_f1(fig: dict[str, float]) -> float:
    return fig.get("macro_f1_3way", fig.get("macro_f1_2way", 0.0))


# How much a false support costs against macro-F1 when thresholds are chosen: MedCite's promise is that a
# shown statement says what its source says, so a wrongly admitted claim weighs more than a lost one.
FALSE_SUPPORT_PENALTY = 0.5


def false_support(fig: dict[str, float]) -> float:
    """Mean share of not-supported claims (contradicted, two-way not supported, NEI) judged supported."""
    keys = ("contradicted_judged_supported", "not_supported_judged_supported", "nei_judged_supported")
    rates = [fig[key] for key in keys if key in fig]
    return float(np.mean(rates)) if rates else 0.0


def choose_thresholds(scored: dict[str, list[Scored]]) -> dict:
    """Return the support and contradiction thresholds that maximise, over the sets, mean macro-F1 minus
    FALSE_SUPPORT_PENALTY times the mean false-support rate (development splits only)."""
    grid = [round(x, 3) for x in np.arange(0.20, 0.951, 0.05)]
    gold = {name: [s.case.label for s in items] for name, items in scored.items()}
    best_key, best = None, None
    for support in grid:
        # "Contradicted" is shown to the reader as "the source says otherwise": the model must favour it over
        # the other two outcomes together.
        for contradict in [t for t in grid if t >= 0.5]:
            per_set = {
                name: figures(gold[name], verdicts(items, support, contradict)) for name, items in scored.items()
            }
            f1 = float(np.mean([macro_f1(f) for f in per_set.values()]))
            wrong = float(np.mean([false_support(f) for f in per_set.values()]))
            key = round(f1 - FALSE_SUPPORT_PENALTY * wrong, 6)
            if best_key is None or key > best_key:
                best_key, best = (
                    key,
                    {
                        "support_threshold": support,
                        "contradict_threshold": contradict,
                        "dev_figures": per_set,
                        "dev_mean_macro_f1": round(f1, 3),
                        "dev_mean_false_support": round(wrong, 3),
                    },
                )
    assert best is not None
    return best
