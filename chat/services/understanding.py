"""Question understanding for the library lookup: disease tags, result context and named studies.

Issue 6 replaces this with PICO extraction over the tag vocabulary. Until then the tags are the
disease tags present in the library, matched at word boundaries ("af" never matches inside
"after"); acronym tags also match their spelled-out form when the library's own texts spell it
out (e.g. AF -> "atrial fibrillation" from a guideline title).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chat.services.text import STOPWORDS, stem, tokens
from evidence.models import Study

_ACRONYM_SKIP = frozenset({"of", "with", "a", "an", "and", "the", "in", "for", "to", "on"})
_LINK = r"(?:[\s-]+(?:is|was|were|test|tests|result|results|status|remains|remained|became|level))*[\s-]*"
_POSITIVE = re.compile(
    rf"\b(?:ctdna|mrd){_LINK}(?:positive|detected|detectable)\b|\b(?:positive|detectable|detected)\s+(?:ctdna|mrd)\b",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    rf"\b(?:ctdna|mrd){_LINK}(?:negative|undetectable|not\s+detected)\b|\b(?:negative|undetectable)\s+(?:ctdna|mrd)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TagVocabulary:
    """Library disease tags and the stem sequences that name each one."""

    forms: dict[str, tuple[tuple[str, ...], ...]]
    weights: dict[str, float]


def _form(words: Iterable[str]) -> tuple[str, ...]:
    return tuple(stem(word) for word in words)


def _acronym_expansions(acronym: str, texts: Iterable[str]) -> set[tuple[str, ...]]:
    """Return word sequences in `texts` whose initials spell `acronym` (stop words in between skipped)."""
    letters = [ch.lower() for ch in acronym if ch.isalpha()]
    if len(letters) < 2:
        return set()
    found: set[tuple[str, ...]] = set()
    for text in texts:
        words = tokens(text)
        for start in range(len(words)):
            matched: list[str] = []
            position = start
            for letter in letters:
                while matched and position < len(words) and words[position] in _ACRONYM_SKIP:
                    position += 1
                word = words[position] if position < len(words) else ""
                if len(word) < 3 or word[0] != letter or word in STOPWORDS or word in _ACRONYM_SKIP:
                    break
                matched.append(words[position])
                position += 1
            else:
                found.add(_form(matched))
    return found


def build_vocabulary(studies: Sequence[Study]) -> TagVocabulary:
    """Return the disease-tag vocabulary of `studies`: each tag's spellings and its rarity weight."""
    texts_by_tag: dict[str, list[str]] = {}
    counts: Counter[str] = Counter()
    for study in studies:
        texts = [study.title, study.key_finding, study.study_name, *study.aliases]
        for tag in {tag.lower(): tag for tag in study.disease_tags}.values():
            texts_by_tag.setdefault(tag.lower(), []).extend(texts)
            counts[tag.lower()] += 1
    forms: dict[str, tuple[tuple[str, ...], ...]] = {}
    originals = {tag.lower(): tag for study in studies for tag in study.disease_tags}
    for key, original in originals.items():
        words = [word for word in re.split(r"[_\s-]+", original) if word]
        variants = {_form(words)}
        head = words[0] if words else ""
        # Short heads are acronyms in any case ("af", "CKD", "HFpEF"); spelled-out forms come
        # only from the texts of the studies carrying the tag.
        if 2 <= len(head) <= 5 and head.isalpha():
            for expansion in _acronym_expansions(head, texts_by_tag.get(key, [])):
                variants.add(expansion + _form(words[1:]))
        forms[key] = tuple(sorted(variants))
    total = max(len(studies), 1)
    weights = {key: math.log(1 + total / counts[key]) for key in forms}
    return TagVocabulary(forms=forms, weights=weights)


def question_disease_tags(*, question: str, vocabulary: TagVocabulary) -> list[str]:
    """Return the library disease tags named in `question`, matched on whole words, in vocabulary order."""
    # Connecting words are skipped on both sides: "heart failure with preserved ejection fraction".
    question_stems = [stem(token) for token in tokens(question) if token not in _ACRONYM_SKIP]
    found = []
    for tag, forms in vocabulary.forms.items():
        for form in forms:
            size = len(form)
            if size and any(tuple(question_stems[i : i + size]) == form for i in range(len(question_stems) - size + 1)):
                found.append(tag)
                break
    return found


def result_context(*, question: str) -> str | None:
    """Return "positive" or "negative" when the question is about a positive or negative ctDNA/MRD result."""
    positive, negative = bool(_POSITIVE.search(question)), bool(_NEGATIVE.search(question))
    if positive != negative:
        return "positive" if positive else "negative"
    return None
