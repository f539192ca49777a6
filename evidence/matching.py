"""Matching a phrase in a text whatever its wording: one case, American spellings, stems, word variants.

`fold` and `form_of` turn text into the stem sequences every matcher compares; `TextIndex` answers
whether a text holds a phrase as a whole-word sequence of stems.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from typing import Protocol

from evidence.text import stem, tokens


class Phrased(Protocol):
    """Anything with the stem forms that express it (a question concept)."""

    @property
    def forms(self) -> tuple[tuple[str, ...], ...]: ...


# Stems spelt with "-ise" in British English ("randomised"), "-ize" in American.
_ISE_STEMS = (
    "randomi",
    "minimi",
    "maximi",
    "optimi",
    "hospitali",
    "immuni",
    "stabili",
    "characteri",
    "organi",
    "recogni",
    "utili",
)
# British spellings folded into American ones before matching ("anaesthesia" = "anesthesia").
_SPELLINGS = [
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"aemia", "emia"),
        (r"haem", "hem"),
        (r"oedema", "edema"),
        (r"oesophag", "esophag"),
        (r"oestr", "estr"),
        (r"paediatr", "pediatr"),
        (r"anaesth", "anesth"),
        (r"orthopaed", "orthoped"),
        (r"gynaec", "gynec"),
        (r"foetal", "fetal"),
        (r"tumour", "tumor"),
        (r"behaviour", "behavior"),
        (r"colour", "color"),
        (r"labour", "labor"),
        (r"fibre", "fiber"),
        (r"centre", "center"),
        (r"ageing", "aging"),
        (r"isation", "ization"),
        (
            r"\b(\w*(?:model|label|signal|travel|cancel|counsel|fuel|channel|level|tunnel|dial|total))l(ing|ed)\b",
            r"\1\2",
        ),
        (rf"\b({'|'.join(_ISE_STEMS)})s(e|ed|es|ing)\b", r"\1z\2"),
    )
]


# Text every spelling above needs (a literal, "lling"/"lled", or a stem before its "s"): most texts hold none, and
# these substring checks cost far less than the twenty substitutions.
_SPELLING_TRACES = (
    *(pattern.pattern for pattern, _ in _SPELLINGS[:-2]),
    "lling",
    "lled",
    *(f"{stem_}s" for stem_ in _ISE_STEMS),
)


def fold(text: str) -> str:
    """Return `text` normalised for matching: Unicode NFKC, lower case, British spellings made American."""
    text = unicodedata.normalize("NFKC", text).lower()
    if not any(trace in text for trace in _SPELLING_TRACES):
        return text
    for pattern, replacement in _SPELLINGS:
        text = pattern.sub(replacement, text)
    return text


def form_of(phrase: str) -> tuple[str, ...]:
    """Return the stem sequence that represents `phrase` when matching."""
    return tuple(stem(token) for token in tokens(fold(phrase)))


class TextIndex:
    """A text's stems, ready for whole-word sequence look-ups.

    A single long word also matches a word of the text that shares all but its last few letters,
    where the stemmer leaves two forms of one word apart ("laparoscopy" / "laparoscopic", "Korea" /
    "Korean", "circumcision" / "circumcised"): at least five letters shared, at most three more
    on either side, and the difference is not a suffix that names another thing ("insulinoma").
    """

    MIN_PREFIX = 5
    MAX_EXTRA = 3
    OTHER_THING = ("oma", "itis", "osis", "ectomy", "otomy")

    def __init__(self, text: str) -> None:
        self.stems = [stem(token) for token in tokens(fold(text))]
        self._joined = " " + " ".join(self.stems) + " "
        self._set = set(self.stems)
        self._sorted: list[str] | None = None

    def has(self, form: tuple[str, ...]) -> bool:
        if not form:
            return False
        if len(form) == 1:
            word = form[0]
            # A three-letter word keeps its plural "s" through the stemmer (four letters at least): "MRAs", "PPIs".
            return word in self._set or self._has_variant(word) or (len(word) == 3 and f"{word}s" in self._set)
        return (" " + " ".join(form) + " ") in self._joined

    def _has_variant(self, word: str) -> bool:
        if len(word) < self.MIN_PREFIX or not word.isalpha():
            return False
        if self._sorted is None:
            self._sorted = sorted(self._set)
        prefix = word[: max(self.MIN_PREFIX, len(word) - self.MAX_EXTRA)]
        position = bisect.bisect_left(self._sorted, prefix)
        while position < len(self._sorted) and self._sorted[position].startswith(prefix):
            if self._variant(word, self._sorted[position]):
                return True
            position += 1
        return False

    def _variant(self, word: str, other: str) -> bool:
        shared = next(
            (i for i, (a, b) in enumerate(zip(word, other, strict=False)) if a != b), min(len(word), len(other))
        )
        rests = (word[shared:], other[shared:])
        return all(len(rest) <= self.MAX_EXTRA and not rest.endswith(self.OTHER_THING) for rest in rests)

    def covers(self, concept: Phrased) -> bool:
        return any(self.has(form) for form in concept.forms)
