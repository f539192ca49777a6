"""The public claim-verification and NLI sets in `../shared/data`, read into one shape with fixed splits.

Nothing here is copied into the repository: every set is read from the shared data folder
(`MEDCITE_SHARED_DATA`, default `../shared/data` beside the checkout). Two shapes come out:

- `Pair`: a claim and one to three evidence sentences with a label, for training the cross-encoder.
- `Case`: a claim and the whole abstract it cites with the gold verdict, for judging the product's
  verifier as it runs (it picks the sentences itself).

Splits are fixed: a set's own train/dev/test files where it has them; SciFact's train claims (the
only SciFact claims here) are split by claim id into train (70 %), dev (10 %) and a held-out test
(20 %) that no training or calibration step reads. Labels are indices into `LABELS`; `NOT_SUPPORTED`
marks a two-way "not supported" label (contradicted or not enough information, undecided between them).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from training.contrast import contradicting_claim

LABELS = ("supported", "contradicted", "not_enough_info")
SUPPORTED, CONTRADICTED, NOT_ENOUGH_INFO = 0, 1, 2
NOT_SUPPORTED = 3  # partial label: either of the last two
SPLITS = ("train", "dev", "test")
CLAIM_SETS = ("scifact", "citation_integrity", "check_covid", "clinifact")

_CITATION_MARK = re.compile(r"\s*[\[(][^\[\]()]*<\|[a-z_]+\|>[^\[\]()]*[\])]|<\|[a-z_]+\|>")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "in",
        "on",
        "and",
        "or",
        "to",
        "for",
        "with",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "that",
        "this",
        "these",
        "those",
        "as",
        "at",
        "from",
        "than",
        "not",
        "no",
        "its",
        "their",
        "it",
        "we",
        "our",
    ]
)


def is_pubmedqa_heldout(pmid: str) -> bool:
    """The answer benchmarks' held-out third of PubMedQA (`benchmarks.common.is_heldout`): never trained on."""
    return int(hashlib.sha1(pmid.encode()).hexdigest(), 16) % 3 == 0


def data_root() -> Path:
    """Return the shared data folder, failing with the variable to set when it is not there."""
    configured = os.environ.get("MEDCITE_SHARED_DATA")
    root = Path(configured) if configured else Path(__file__).resolve().parents[2] / "shared" / "data"
    if not (root / "claims").is_dir():
        raise FileNotFoundError(
            f"no claim sets under {root}; put the shared folder beside the checkout or set MEDCITE_SHARED_DATA"
        )
    return root


@dataclass(frozen=True)
class Pair:
    claim: str
    evidence: str
    label: int
    source: str


@dataclass(frozen=True)
class Case:
    dataset: str
    case_id: str
    claim: str
    sentences: tuple[str, ...]
    label: int  # SUPPORTED, CONTRADICTED, NOT_ENOUGH_INFO or NOT_SUPPORTED
    rationale: tuple[int, ...] = ()

    @property
    def passage(self) -> str:
        return "\n".join(self.sentences)


def clean_claim(text: str) -> str:
    """Return a citing sentence without its citation markers ("[<|cit|>, 7]")."""
    return " ".join(_CITATION_MARK.sub("", text).split()).replace(" .", ".").replace(" ,", ",")


def _bucket(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10


def _scifact_split(claim_id: object) -> str:
    bucket = _bucket(f"scifact:{claim_id}")
    return "train" if bucket < 7 else "dev" if bucket == 7 else "test"


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def closest_sentences(claim: str, sentences: tuple[str, ...], count: int) -> list[int]:
    """Return the indices of the `count` sentences sharing most content words with `claim`."""
    words = _words(claim)
    scored = sorted(range(len(sentences)), key=lambda i: (-len(words & _words(sentences[i])), i))
    return scored[:count]


# --------------------------------------------------------------------------- cases (claim vs abstract)


def _scifact_like_cases(
    dataset: str, claims: Iterator[dict], corpus: dict[int, tuple[str, ...]], split_of, split: str
) -> Iterator[Case]:
    for record in claims:
        if split_of(record) != split:
            continue
        claim = clean_claim(record["claim"])
        evidence = record.get("evidence") or {}
        for doc_id, sets in evidence.items():
            sentences = corpus.get(int(doc_id))
            if not sentences or not sets:
                continue
            label = {
                "SUPPORT": SUPPORTED,
                "ACCURATE": SUPPORTED,
                "CONTRADICT": CONTRADICTED,
                "NOT_ACCURATE": NOT_SUPPORTED,
            }[sets[0]["label"]]
            rationale = tuple(sorted({i for s in sets for i in s["sentences"]}))
            yield Case(dataset, f"{record['id']}:{doc_id}", claim, sentences, label, rationale)
        if not evidence:
            for doc_id in record.get("cited_doc_ids") or []:
                sentences = corpus.get(int(doc_id))
                if sentences:
                    yield Case(dataset, f"{record['id']}:{doc_id}", claim, sentences, NOT_ENOUGH_INFO)


def _corpus(path: Path, key: str = "doc_id") -> dict:
    found = {}
    for record in _jsonl(path):
        sentences = tuple(" ".join(s.split()) for s in record["abstract"] if s and s.strip())
        found[record[key]] = sentences
    return found


def scifact_cases(split: str) -> Iterator[Case]:
    root = data_root() / "claims" / "scifact"
    corpus = _corpus(root / "corpus.jsonl")
    yield from _scifact_like_cases(
        "scifact", _jsonl(root / "claims_train.jsonl"), corpus, lambda r: _scifact_split(r["id"]), split
    )


def citation_integrity_cases(split: str) -> Iterator[Case]:
    root = data_root() / "claims" / "citation_integrity"
    corpus = _corpus(root / "corpus.jsonl")
    yield from _scifact_like_cases(
        "citation_integrity", _jsonl(root / f"claims_{split}.jsonl"), corpus, lambda r: split, split
    )


def check_covid_cases(split: str) -> Iterator[Case]:
    root = data_root() / "claims" / "check_covid"
    corpus = _corpus(root / "corpus.json", key="cord_id")
    labels = {"SUPPORT": SUPPORTED, "REFUTE": CONTRADICTED, "NOTENOUGHINFO": NOT_ENOUGH_INFO}
    for kind in ("composed", "extracted"):
        for record in _jsonl(root / split / f"covidCheck_{split}_{kind}.json"):
            sentences = corpus.get(record["cord_id"])
            if not sentences:
                continue
            rationale = tuple(sorted({e["sent_index"] for e in record.get("evidence_set") or []}))
            yield Case(
                "check_covid",
                str(record["id"]),
                " ".join(record["claim"].split()),
                sentences,
                labels[record["label"]],
                rationale,
            )


def _abstract_sentences(title: str, abstract: str) -> tuple[str, ...]:
    from evidence.sentences import split_sentences

    lines = [title] + [line for line in abstract.split("\n") if line.strip()]
    return tuple(" ".join(s.split()) for line in lines for s in split_sentences(line) if s.strip())


def clinifact_cases(split: str) -> Iterator[Case]:
    name = {"train": "train_set.csv", "dev": "validation_set.csv", "test": "test_set.csv"}[split]
    csv.field_size_limit(1 << 30)
    with (data_root() / "claims" / "clinifact" / name).open(encoding="utf-8", newline="") as handle:
        for record in csv.DictReader(handle):
            sentences = _abstract_sentences(record["article_title"], record["article_abstract"])
            if not sentences:
                continue
            label = {"1": SUPPORTED, "0": NOT_SUPPORTED, "2": NOT_ENOUGH_INFO}[record["label"]]
            yield Case("clinifact", record["index"], " ".join(record["claim"].split()), sentences, label)


CASES = {
    "scifact": scifact_cases,
    "citation_integrity": citation_integrity_cases,
    "check_covid": check_covid_cases,
    "clinifact": clinifact_cases,
}


def cases(dataset: str, split: str) -> list[Case]:
    """Return the claim-vs-abstract cases of one set's split."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}")
    return list(CASES[dataset](split))


# --------------------------------------------------------------------------- training pairs


def _evidence_text(sentences: tuple[str, ...], indices) -> str:
    return " ".join(sentences[i] for i in sorted(indices) if 0 <= i < len(sentences))


# Hard negatives per case: the sentences closest to the claim that are not its evidence, as the verifier
# meets them in an abstract (single sentences, and two-sentence windows as the product reads units).
# Citation-Integrity marks evidence loosely, so one sentence only there.
_NEGATIVES = {"scifact": 4, "citation_integrity": 1, "check_covid": 3, "clinifact": 3}
_WINDOWS = {"scifact": 2, "citation_integrity": 0, "check_covid": 1, "clinifact": 1}


def _negatives(case: Case, exclude: tuple[int, ...]) -> list[Pair]:
    ranked = [i for i in closest_sentences(case.claim, case.sentences, len(case.sentences)) if i not in exclude]
    singles = ranked[: _NEGATIVES[case.dataset]]
    pairs = [Pair(case.claim, case.sentences[i], NOT_ENOUGH_INFO, case.dataset) for i in singles]
    windows = [(i, i + 1) for i in singles if i + 1 < len(case.sentences) and i + 1 not in exclude]
    pairs.extend(
        Pair(case.claim, _evidence_text(case.sentences, window), NOT_ENOUGH_INFO, case.dataset)
        for window in windows[: _WINDOWS[case.dataset]]
    )
    return pairs


def pairs_from_case(case: Case) -> list[Pair]:
    """Return training pairs for one case: its rationale (alone and with a neighbour) and hard negatives."""
    source = case.dataset
    if case.rationale and case.label != NOT_ENOUGH_INFO:
        pairs = [Pair(case.claim, _evidence_text(case.sentences, case.rationale), case.label, source)]
        after = max(case.rationale) + 1
        if len(case.rationale) == 1 and after < len(case.sentences):
            pairs.append(Pair(case.claim, _evidence_text(case.sentences, (*case.rationale, after)), case.label, source))
        return pairs + _negatives(case, case.rationale)
    if case.rationale:  # Check-COVID marks the sentence judged insufficient
        marked = Pair(case.claim, _evidence_text(case.sentences, case.rationale), NOT_ENOUGH_INFO, source)
        return [marked, *_negatives(case, case.rationale)]
    if case.label == NOT_ENOUGH_INFO:
        return _negatives(case, ())
    # No rationale given (CliniFact): the two sentences closest to the claim carry the label together.
    closest = closest_sentences(case.claim, case.sentences, 2)
    return [Pair(case.claim, _evidence_text(case.sentences, closest), case.label, source)]


def contrast_pairs(case: Case) -> list[Pair]:
    """Return a supported case's rewritten twin (`training.contrast`): contradicted by the case's evidence,
    not enough information against the closest sentence that is not its evidence."""
    if case.label != SUPPORTED:
        return []
    twin = contradicting_claim(case.claim, random.Random(f"contrast:{case.case_id}"))
    if not twin:
        return []
    evidence = case.rationale or tuple(closest_sentences(case.claim, case.sentences, 2))
    found = [Pair(twin, _evidence_text(case.sentences, evidence), CONTRADICTED, case.dataset)]
    others = [i for i in closest_sentences(case.claim, case.sentences, len(case.sentences)) if i not in evidence]
    if others:
        found.append(Pair(twin, case.sentences[others[0]], NOT_ENOUGH_INFO, case.dataset))
    return found


def claim_pairs(split: str, datasets: tuple[str, ...] = CLAIM_SETS, *, contrast: bool = False) -> list[Pair]:
    """Return the training pairs of every claim set's split (with `contrast`, supported claims' rewritten
    twins too: training only, never the splits that calibrate or measure)."""
    return [
        pair
        for dataset in datasets
        for case in cases(dataset, split)
        for pair in pairs_from_case(case) + (contrast_pairs(case) if contrast else [])
    ]


_NLI_LABELS = {
    "entailment": SUPPORTED,
    "contradiction": CONTRADICTED,
    "neutral": NOT_ENOUGH_INFO,
    "not_entailment": NOT_SUPPORTED,
}


def nli_pairs() -> list[Pair]:
    """Return the public NLI pairs (premise as evidence, hypothesis as claim)."""
    found = []
    for record in _jsonl(data_root() / "nli" / "pairs.jsonl"):
        label = _NLI_LABELS.get(record["label"])
        if label is not None and record["premise"].strip() and record["hypothesis"].strip():
            found.append(
                Pair(
                    " ".join(record["hypothesis"].split()),
                    " ".join(record["premise"].split()),
                    label,
                    str(record["source"]),
                )
            )
    return found
