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
    """Score every case's candidate units and time one verdict at the model's thresholds (the cited abstract
    embedded beforehand, as an answer's sources are); other thresholds are applied later, reusing the readings."""
    from evidence.claims import PassageCache, PassageText, decide, score_claim

    if embed is None:
        from pubmed.embeddings import embed_cached as embed
    cache = PassageCache()
    out = []
    for case in cases:
        passage = PassageText(doc_id=case.case_id.split(":")[-1], chunk_id="abstract", text=case.passage)
        # A cited source is embedded once per answer, whichever of its claims comes first; the cost timed here is
        # the verifier's own per claim: the claim's embedding, the choice of units and the model's reads.
        cache.get(passage, embed)
        started = time.perf_counter()
        scored = score_claim(case.claim, [passage], embed=embed, model=model, cache=cache)
        # The model reads units when a verdict needs them: the cost is that of a verdict at the model's thresholds.
        decide(
            scored,
            support_threshold=model.config.support_threshold,
            contradict_threshold=model.config.contradict_threshold,
        )
        out.append(Scored(case, scored, (time.perf_counter() - started) * 1000))
    return out


def model_verdict(scored, support: float, contradict: float) -> str:
    """The product's verdict on a scored claim (`evidence.claims.decide`) at the given thresholds."""
    from evidence.claims import decide

    return decide(scored, support_threshold=support, contradict_threshold=contradict).verdict


# The verifier MedCite had before the trained model: a unit with cosine ≥ 0.63 to the claim that passes the
# exact checks is support. The benchmark prints it beside the model, as the baseline of the same run.
SIMILARITY_BASELINE = 0.63


def similarity_verdict(scored) -> str:
    """The similarity baseline's verdict (supported or not enough information; it never says contradicted)."""
    from evidence.claims.judge import supported_by
    from evidence.claims.verdicts import NOT_ENOUGH_INFO as N

    close = [c for c in scored.candidates if c.similarity >= SIMILARITY_BASELINE]
    if scored.problem or not close:
        return N
    return supported_by(scored, close, close[0].similarity).verdict


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


def false_contradiction(gold: Sequence[int], predicted: Sequence[int]) -> float:
    """Share of supported claims judged contradicted (shown to the reader as "the source says otherwise")."""
    said = [p for g, p in zip(gold, predicted, strict=True) if g == SUPPORTED]
    return float(np.mean([p == CONTRADICTED for p in said])) if said else 0.0


def choose_thresholds(scored: dict[str, list[Scored]]) -> dict:
    """Return the support and contradiction thresholds that maximise, over the sets, mean macro-F1 minus
    FALSE_SUPPORT_PENALTY times the mean false-support rate and the same times the mean rate of supported
    claims judged contradicted (development splits only)."""
    gold = {name: [s.case.label for s in items] for name, items in scored.items()}
    best_key, best = None, None
    # Support: the model's agreement with a unit the rules accept (a low bar: the rules already chose it).
    # Contradiction is shown to the reader as "the source says otherwise": the model must favour it over
    # the other two outcomes together.
    for support in [round(x, 3) for x in np.arange(0.05, 0.501, 0.05)]:
        for contradict in [round(x, 3) for x in np.arange(0.50, 0.951, 0.05)]:
            predicted = {name: verdicts(items, support, contradict) for name, items in scored.items()}
            per_set = {name: figures(gold[name], predicted[name]) for name in scored}
            f1 = float(np.mean([macro_f1(f) for f in per_set.values()]))
            wrong = float(np.mean([false_support(f) for f in per_set.values()]))
            alarm = float(np.mean([false_contradiction(gold[name], predicted[name]) for name in scored]))
            key = round(f1 - FALSE_SUPPORT_PENALTY * (wrong + alarm), 6)
            if best_key is None or key > best_key:
                best_key, best = (
                    key,
                    {
                        "support_threshold": support,
                        "contradict_threshold": contradict,
                        "dev_figures": per_set,
                        "dev_mean_macro_f1": round(f1, 3),
                        "dev_mean_false_support": round(wrong, 3),
                        "dev_mean_supported_judged_contradicted": round(alarm, 3),
                    },
                )
    assert best is not None
    return best
