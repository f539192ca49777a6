"""Counterfactual claims for training: a supported claim rewritten to say the opposite.

The public claim sets hold few contradicted claims (SciFact's train claims: 1 in 4 of those with
evidence; Citation-Integrity and CliniFact none labelled as such), and a verifier trained on them
learns "on topic" far better than "says the opposite". Each supported training claim therefore gets
one rewritten twin that its own evidence contradicts: its direction reversed ("increases" →
"decreases"), or a negation added or removed ("is associated" → "is not associated"). The twin is
also paired with a sentence of the abstract that is not its evidence, labelled not enough
information, so that a negation alone never reads as a contradiction.

This is training data only: the product never rewrites a claim. The rewrite lists are deliberately
written apart from the PubMedQA perturbations of `benchmarks/faithfulness.py`, and the figures that
judge the model come from the public sets' own, expert-written contradictions.
"""

from __future__ import annotations

import random
import re

# Opposite directions, each word of a pair mapping to the other (verb forms, comparatives, adjectives).
_PAIRS = (
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("higher", "lower"),
    ("raises", "lowers"),
    ("raised", "lowered"),
    ("improves", "worsens"),
    ("improved", "worsened"),
    ("improve", "worsen"),
    ("enhances", "impairs"),
    ("enhanced", "impaired"),
    ("promotes", "inhibits"),
    ("promote", "inhibit"),
    ("promoted", "inhibited"),
    ("activates", "suppresses"),
    ("activated", "suppressed"),
    ("upregulates", "downregulates"),
    ("upregulated", "downregulated"),
    ("up-regulates", "down-regulates"),
    ("up-regulated", "down-regulated"),
    ("upregulation", "downregulation"),
    ("positively", "negatively"),
    ("positive", "negative"),
    ("more", "less"),
    ("greater", "smaller"),
    ("longer", "shorter"),
    ("faster", "slower"),
    ("superior", "inferior"),
    ("accelerates", "delays"),
    ("accelerated", "delayed"),
    ("gain", "loss"),
    ("benefit", "harm"),
    ("beneficial", "harmful"),
    ("protective", "detrimental"),
    ("effective", "ineffective"),
    ("elevated", "reduced"),
    ("induces", "prevents"),
)
_ONE_WAY = {
    "reduces": "increases",
    "reduced": "increased",
    "reduce": "increase",
    "reduction": "increase",
    "fewer": "more",
    "larger": "smaller",
    "prevents": "causes",
    "decline": "rise",
    "lowers": "raises",
}
_OPPOSITE = {**{a: b for a, b in _PAIRS}, **{b: a for a, b in _PAIRS}, **_ONE_WAY}
_DIRECTION = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _OPPOSITE), key=len, reverse=True)) + r")\b", re.I)

_AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|could|may|might|will|would|should|does|do|did|has|have|had)\b(?!\s+not\b)", re.I
)
_NEGATED = (
    (re.compile(r"\b(is|are|was|were|could|may|might|will|would|should|does|do|did|has|have|had) not\b", re.I), r"\1"),
    (re.compile(r"\bcannot\b", re.I), "can"),
    (re.compile(r"\bno (significant|clear|effect|association|difference|benefit|change)\b", re.I), r"a \1"),
    (re.compile(r"\bunrelated to\b", re.I), "related to"),
    (re.compile(r"\bindependent of\b", re.I), "dependent on"),
    (re.compile(r"\bfails to\b", re.I), "manages to"),
)
# Third-person verbs a claim often states a finding with ("X reduces Y" → "X does not reduce Y").
_VERBS = re.compile(
    r"\b(reduces|increases|decreases|improves|causes|induces|inhibits|promotes|predicts|prevents|regulates|"
    r"affects|correlates|contributes|leads|requires|enhances|impairs|lowers|raises|protects|mediates|drives|"
    r"confers|alters|modulates|activates|suppresses|blocks|triggers|extends|shortens|accelerates|delays|"
    r"improve|reduce|increase|cause|prevent|predict)\b"
)


def _lemma(verb: str) -> str:
    if verb.endswith(("sses", "ches", "shes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def _swap(claim: str, match: re.Match[str], replacement: str) -> str:
    word = match.group(0)
    if word.isupper():
        replacement = replacement.upper()
    elif word[0].isupper():
        replacement = replacement[0].upper() + replacement[1:]
    return claim[: match.start()] + replacement + claim[match.end() :]


def contradicting_variants(claim: str) -> list[str]:
    """Return rewrites of `claim` that state the opposite (empty when none applies)."""
    found: list[str] = []
    direction = _DIRECTION.search(claim)
    if direction:
        found.append(_swap(claim, direction, _OPPOSITE[direction.group(0).lower()]))
    for pattern, replacement in _NEGATED:
        undone = pattern.sub(replacement, claim, count=1)
        if undone != claim:
            found.append(undone)
            break
    else:
        auxiliary = _AUXILIARY.search(claim)
        if auxiliary:
            word = auxiliary.group(0)
            found.append(_swap(claim, auxiliary, "cannot" if word.lower() == "can" else f"{word.lower()} not"))
        else:
            verb = _VERBS.search(claim)
            if verb:
                word = verb.group(0)
                helper = "does not" if word.endswith("s") else "do not"
                found.append(claim[: verb.start()] + f"{helper} {_lemma(word)}" + claim[verb.end() :])
    return [variant for variant in dict.fromkeys(found) if variant != claim]


def contradicting_claim(claim: str, rng: random.Random) -> str:
    """Return one rewrite of `claim` stating the opposite, chosen by `rng`, or "" when none applies."""
    variants = contradicting_variants(claim)
    return rng.choice(variants) if variants else ""
