"""The trained half of the instruction detector (`evidence.injection`): a logistic regression over hashed
character and word n-grams, the opening words and sentence shapes, with weights in `injection_model/`
(trained by `python -m training.injection`; card in `injection_model/MODEL_CARD.md`).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from evidence.characters import strip_invisible

MODEL_DIR = Path(__file__).resolve().parent / "injection_model"
DIMENSION = 1 << 18
MIN_CLASSIFIED_WORDS = 3


# Cyrillic letters drawn like Latin ones ("\u0405\u0443\u0455tem" reads "System"); NFKC keeps them apart. A
# Unicode character table, not language: English abstracts use no Cyrillic, while Greek letters (alpha-
# blockers, kappa) are science and are left alone.
_LOOKALIKES = str.maketrans(
    "\u0430\u0432\u0435\u0456\u0458\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445\u0455\u04bb\u0501\u04cf"
    "\u0410\u0412\u0415\u0406\u0408\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0405",
    "abeijkmhopctyxshdl" "ABEIJKMHOPCTYXS",
)


def folded(sentence: str) -> str:
    """Return `sentence` with compatibility forms (NFKC), look-alike letters and invisible characters folded,
    spacing kept as written (a word spelled out letter by letter is told from the words around it by it)."""
    return strip_invisible(unicodedata.normalize("NFKC", sentence)).translate(_LOOKALIKES)


def normalised(sentence: str) -> str:
    """Return `sentence` folded for matching (`folded`), its spacing collapsed to single spaces."""
    return " ".join(folded(sentence).split())


_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
_QUOTED = re.compile(r"[\"\u201c][^\"\u201d]*[\"\u201d]|'[^']{3,}'")

# Shapes of text that speaks to its reader, each alone common enough in abstracts that it is only an
# input of the classifier, never a rule: which combinations mark an instruction is learnt from data.
_STRUCTURE: dict[str, re.Pattern[str]] = {
    # "you"/"your" outside quotation marks.
    "second_person": re.compile(r"\b(?:you|your|yours|yourself)\b"),
    # What the reader produces named as such: "the summary", "any digest", "when quoting".
    "meta_output": re.compile(
        r"\b(?:this|the|your|any|every|each|all|a|whatever) (?:\w+ )?(?:summary|summaries|synopsis|digest|overview"
        r"|answer|response|reply|output|retelling|write-?up)\b|\bsummari[sz](?:e|es|ing|er|ers|ation)\b"
        r"|\b(?:when|whenever|while) (?:quoting|citing|condensing|passing|relaying|this is)\b"
    ),
    # An obligation or request: modal verbs, "is to be", "it is required that".
    "obligation": re.compile(
        r"\b(?:must|shall|should|ought to|has to|have to|is to|are to|needs? to)\b"
        r"|\bit is (?:hereby )?(?:required|requested|mandatory|essential|expected|imperative)\b"
        r"|\b(?:we|the authors) (?:ask|request|would (?:like|prefer|appreciate))\b"
    ),
    # Overriding what the data say: "regardless of", "no matter what", "rather than the 41% observed".
    "override": re.compile(
        r"\b(?:regardless of|no matter (?:what|how)|irrespective of|even though|even if|whatever the"
        r"|rather than|instead of|in place of)\b"
    ),
    # Grading or labelling verbs with "as": "rate the evidence as high", "label this trial as".
    "grading": re.compile(
        r"\b(?:rate|grade|classify|label|score|mark|rank|call|present|describe|treat|report|list|cite|give)\b"
        r"[^.;]{0,50}\bas\b"
    ),
    # Suppression: "leave out", "omit", "do not mention", "nothing about".
    "suppression": re.compile(
        r"\b(?:leave|left|keep|kept) [^.;]{0,40}\bout\b|\b(?:omit|omitted|suppress|hide|skip|drop|exclude)\b"
        r"|\b(?:not|never) (?:be )?(?:mention|mentioned|reported|brought up|shown|repeated)\b|\bnothing about\b"
    ),
    # Links, key=value and JSON-ish blobs, markup, comments, long encoded tokens.
    "link": re.compile(r"https?://|\bwww\.|\.example\b"),
    "key_value": re.compile(r"\b\w+=\w|[{\[]\s*[\"']\w+[\"']\s*:|^[\w-]{2,30}:\s|\|\s*\w+\s*:"),
    "markup": re.compile(r"<\s*/?\s*[a-z]+[^>]{0,80}>|<!--|\[//\]|\[comment\]|\[\[|\{\{"),
    "encoded": re.compile(r"\b(?=[a-z0-9+/]*[0-9+/])[a-z0-9+/]{12,}={0,2}(?:\W|$)|\b(?:base ?64|rot ?13|hex)\b"),
    "quoted": re.compile(r"[\"'\u2018\u201c]"),
    "question": re.compile(r"\?\s*$"),
    "exclamation": re.compile(r"!"),
}
STRUCTURE_NAMES = tuple(_STRUCTURE)
_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64
)
_BASE = np.uint64(1_000_003)


def _buckets(values: np.ndarray, salt: int) -> np.ndarray:
    """Return hash buckets in [0, DIMENSION) for uint64 `values` (multiplicative hashing, one salt per kind)."""
    mixed = (values ^ np.uint64(salt)) * _MULTIPLIERS[salt % 4]
    return (mixed >> np.uint64(64 - 18)).astype(np.int64) % DIMENSION


def structure_flags(text: str) -> list[str]:
    """Return the names of the `_STRUCTURE` shapes found in lower-cased, normalised `text`."""
    unquoted = _QUOTED.sub(" ", text)
    return [name for name, pattern in _STRUCTURE.items() if pattern.search(unquoted if name != "quoted" else text)]


def feature_indices(sentence: str) -> np.ndarray:
    """Return the hashed feature indices of `sentence`, one per occurrence (a repeated n-gram counts twice).

    Character 3-5-grams, words, word pairs, the first two words (a sentence that opens with a verb
    speaks to its reader), and the structural shapes above, each alone and paired with the opening
    word. Digits are folded to 0 (a PMID is a shape, not a word) and case is ignored. Hashing is
    vectorised (numpy), so a sentence costs a few tens of microseconds.
    """
    return _lowered_feature_indices(normalised(sentence).lower())


def _lowered_feature_indices(lowered: str) -> np.ndarray:
    text = re.sub(r"\d", "0", lowered)
    codes = np.frombuffer(f" {text} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    parts = []
    rolling = codes
    for size in range(2, 6):
        if len(rolling) < 2:
            break
        rolling = rolling[:-1] * _BASE + codes[size - 1 :]
        if size >= 3:
            parts.append(_buckets(rolling, size))
    words = _WORD.findall(text)
    opening = words[0] if words else ""
    tokens = [f"w:{word}" for word in words]
    tokens += [f"b:{left} {right}" for left, right in itertools.pairwise(words)]
    tokens += [f"f:{opening}", f"f2:{' '.join(words[:2])}"]
    for name in structure_flags(text):
        tokens += [f"s:{name}", f"sf:{name}:{opening}"]
    parts.append(np.fromiter((zlib.crc32(token.encode()) for token in tokens), dtype=np.uint64, count=len(tokens)))
    parts[-1] = _buckets(parts[-1], 7)
    return np.concatenate(parts)


# Where an instruction hides after a real finding: "(18% vs 9%), which should not be brought up",
# "...; when summarising, call this a decisive win", "... - report it as ten times that". Parentheses are
# not clause breaks: split there, abbreviations and asides ("(Child-Pugh class A)") became the false
# positives of the first clause-level build (6 of 9,534 PubMedQA sentences).
_CLAUSE_BREAK = re.compile(
    r"\s*(?:;|:\s|\s[-\u2013\u2014]\s|,\s+(?=(?:but|which|and|so|then|while|when|whereas|though)\b))\s*"
)
MIN_CLAUSE_WORDS = 4


def clauses(lowered: str) -> list[str]:
    """Return the sentence and, when it has several, each of its clauses of at least `MIN_CLAUSE_WORDS` words.

    An instruction appended to a real result is diluted by the result's words when the sentence is scored
    whole; scored alone, the clause reads as what it is.
    """
    parts = [part.strip(" ,.") for part in _CLAUSE_BREAK.split(lowered)]
    found = [part for part in parts if len(part.split()) >= MIN_CLAUSE_WORDS and part != lowered]
    return [lowered, *dict.fromkeys(found)] if len(parts) > 1 else [lowered]


class InstructionClassifier:
    """The trained part of the detector: sentence in, probability-like score out."""

    def __init__(self, weights: np.ndarray, bias: float, threshold: float) -> None:
        self.weights = weights.astype(np.float32)
        self.bias = bias
        self.threshold = threshold

    @classmethod
    def load(cls, directory: Path = MODEL_DIR) -> InstructionClassifier:
        with np.load(directory / "weights.npz") as stored:
            return cls(stored["weights"], float(stored["bias"]), float(stored["threshold"]))

    def score(self, sentence: str) -> float:
        """Return the highest logit of `sentence` and its clauses (>= `threshold` reads as an instruction)."""
        return self.lowered_score(normalised(sentence).lower())

    def _score(self, indices: np.ndarray) -> float:
        if not len(indices):
            return self.bias
        return float(self.weights[indices].sum() / np.sqrt(len(indices)) + self.bias)

    def flags(self, sentence: str) -> bool:
        return self.flags_lowered(normalised(sentence).lower())

    def flags_lowered(self, lowered: str) -> bool:
        """Return `flags` for a sentence already normalised and lower-cased (the detector's hot path).

        A fragment of fewer than `MIN_CLASSIFIED_WORDS` words ("Summary.", "None.", a bare trial id)
        is left to the rules: it carries too few features for the classifier to judge, and such
        fragments were most of its false positives on SciFact.
        """
        if len(lowered.split()) < MIN_CLASSIFIED_WORDS:
            return False
        return self.lowered_score(lowered) >= self.threshold

    def lowered_score(self, lowered: str) -> float:
        """Return the highest logit of the sentence and its clauses (`clauses`)."""
        return max(self._score(_lowered_feature_indices(part)) for part in clauses(lowered))


@lru_cache(maxsize=1)
def classifier() -> InstructionClassifier:
    """Return the shipped classifier (loaded once)."""
    return InstructionClassifier.load()
