"""Numbers in clinical prose, compared across formats (0.5 vs 50%, five vs 5, 1,000 vs 1000, .05 vs 0.05)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence.text import roman_value

_WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "twice": 2,
    "double": 2,
    "triple": 3,
    "threefold": 3,
    "twofold": 2,
    "fourfold": 4,
    "tenfold": 10,
}

# Digits glued to letters belong to names, genes and codes (HER2, IMpower010, MERMAID-1, COVID-19):
# they are identifiers, not quantities.
_NUMERAL = re.compile(
    r"(?<![A-Za-z0-9_.])(?<![A-Za-z]-)"
    r"(?P<value>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<percent>\s?(?:%|per\s?cent\b|percent\b))?",
    re.IGNORECASE,
)
_WORD_NUMBER = re.compile(rf"\b(?P<word>{'|'.join(_WORDS)})\b(?P<percent>\s(?:per\s?cent|percent)\b)?", re.IGNORECASE)
_ROMAN_NUMBER = re.compile(r"\b(?:stage|phase|grade|class|type|tier)\s+(?P<roman>I{1,3}|IV|VI?)(?:[ABCabc])?\b")
_MARKER = re.compile(r"\[\s*(?:citation\s*:[^\]]*|\d{1,3}(?:\s*[,;\u2013-]\s*\d{1,3})*)\s*\]", re.IGNORECASE)


@dataclass(frozen=True)
class Number:
    """One quantity mentioned in text: as written, its value, and whether it was a percentage."""

    text: str
    value: float
    percent: bool
    start: int
    end: int

    def readings(self) -> frozenset[float]:
        """Return the values this number may stand for: 50% is 50 or 0.5, and 0.5 is 0.5 or 50 (%)."""
        values = {self.value}
        if self.percent:
            values.add(self.value / 100)
        elif 0 < self.value < 1:
            values.add(self.value * 100)
        return frozenset(round(value, 6) for value in values)


def strip_markers(text: str) -> str:
    """Return `text` without citation markers ([1], [2, 3], [citation:docId:chunkId])."""
    return _MARKER.sub(" ", text)


def numbers_in(text: str) -> list[Number]:
    """Return every quantity in `text` (numerals, number words, stage/phase roman numerals), markers ignored."""
    text = strip_markers(text)
    found: list[Number] = []
    for match in _NUMERAL.finditer(text):
        value = float(match.group("value").replace(",", ""))
        found.append(Number(match.group(0).strip(), value, bool(match.group("percent")), *match.span()))
    for match in _WORD_NUMBER.finditer(text):
        value = float(_WORDS[match.group("word").lower()])
        found.append(Number(match.group(0), value, bool(match.group("percent")), *match.span()))
    for match in _ROMAN_NUMBER.finditer(text):
        if (roman := roman_value(match.group("roman"))) is not None:
            found.append(Number(match.group(0), float(roman), False, *match.span("roman")))
    return sorted(found, key=lambda number: number.start)


def readings_in(text: str) -> frozenset[float]:
    """Return every value any quantity in `text` may stand for."""
    return frozenset(value for number in numbers_in(text) for value in number.readings())


def missing_numbers(claim: str, support: str) -> list[Number]:
    """Return the claim's numbers that the supporting text does not state in any format.

    A percentage needs a percentage or a proportion in the support: "35 of 40 patients" does not state "40%".
    """
    stated = numbers_in(support)
    available = frozenset(value for number in stated for value in number.readings())
    proportions = frozenset(
        value for number in stated if number.percent or 0 < number.value < 1 for value in number.readings()
    )
    return [
        number
        for number in numbers_in(claim)
        if not number.readings() & (proportions if number.percent else available)
    ]
