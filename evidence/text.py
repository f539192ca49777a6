"""Small, deterministic text helpers shared by question understanding and the extractive composer."""

from __future__ import annotations

import re
from functools import lru_cache

from evidence import language

_TOKEN = re.compile(r"[A-Za-z0-9]+")
_SUFFIXES = (
    "ations",
    "ation",
    "ating",
    "ated",
    "ates",
    "ate",
    "ments",
    "ment",
    "ants",
    "ant",
    "ings",
    "ing",
    "ies",
    "ed",
    "es",
    "s",
)

# Roman numerals as written for stages, phases, grades and classes ("stage III", "phase IV", "FC II").
ROMAN_NUMERALS = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6}


def roman_value(word: str) -> int | None:
    """Return the value of a Roman numeral from I to VI in either case, or None for any other word."""
    return ROMAN_NUMERALS.get(word.lower())


def tokens(text: str) -> list[str]:
    """Return the lower-cased alphanumeric tokens of `text` (hyphenated words split)."""
    return [token.lower() for token in _TOKEN.findall(text)]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return a crude stem: common English suffixes removed, keeping at least four characters."""
    # Cached: judging an answer's candidates stems every word of their abstracts, mostly the same words.
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    # "improve"/"improved", "disease"/"diseases" share a stem.
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def content_terms(text: str) -> list[str]:
    """Return the stems of the topic words of `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    not_topic = language.words(*language.NOT_TOPIC)
    for token in tokens(text):
        if token in not_topic or len(token) < 2 or token.isdigit():
            continue
        seen.setdefault(stem(token), None)
    return list(seen)


def stems(text: str) -> set[str]:
    return {stem(token) for token in tokens(text)}


# The shapes of drug names (INN stems) and of intervention nouns, for questions whose intervention
# the tag vocabulary does not know ("semaglutide", "RSV vaccine", "decompressive surgery").
DRUG_NAME = re.compile(
    r"\b[a-z]{3,}(?:mab|tinib|ciclib|parib|rafenib|lisib|zomib|platin|taxel|rubicin|gliflozin|gliptin|glutide|"
    r"sartan|pril|olol|dipine|statin|xaban|gatran|parin|prazole|floxacin|cillin|mycin|cycline|azole|vir|"
    r"tide|lukast|tropium|terol|sone|solone|idronate|dronate|coxib|setron|triptan|oxetine|azepam|semide|thiazide)s?\b",
    re.IGNORECASE,
)
# The shapes of disease names ("fibrosis", "hepatitis", "anaemia", "lymphoma", "neuropathy"); head nouns such as
# "fracture" or "sepsis" are curated words (`language.WordClass.DISEASE`).
_DISEASE_SHAPE = re.compile(r"\b\w+(?:osis|itis|aemia|emia|oma|pathy|plasia|algia|uria|ity)\b", re.IGNORECASE)


def is_intervention(phrase: str) -> bool:
    """Return True when `phrase` reads as a drug (its name's shape) or an intervention (a curated head noun,
    `language.WordClass.INTERVENTION`: "surgery", "vaccine", "stent")."""
    return bool(DRUG_NAME.search(phrase)) or _has_word_of(phrase, language.WordClass.INTERVENTION)


def is_disease(phrase: str) -> bool:
    """Return True when `phrase` reads as a disease or condition: a disease-name shape or a curated head noun
    (`language.WordClass.DISEASE`: "cancer", "fracture", "sepsis")."""
    return bool(_DISEASE_SHAPE.search(phrase)) or _has_word_of(phrase, language.WordClass.DISEASE)


def is_population(phrase: str) -> bool:
    """Return True when `phrase` names who the patients are (children, older adults, pregnancy): a word of the
    curated population class (`language.WordClass.POPULATION`)."""
    return _has_word_of(phrase, language.WordClass.POPULATION)


def _has_word_of(phrase: str, word_class: str) -> bool:
    """Return True when a word of `phrase` is in the curated `word_class`."""
    words = language.words(word_class)
    return any(token in words for token in tokens(phrase))
