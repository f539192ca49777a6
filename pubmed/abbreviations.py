"""What a piece of shorthand stands for, as the stored literature defines it.

Abstracts define their abbreviations where they first use them: "chronic low back pain (LBP)". A clinician's
"LBP" that no curated row spells out is read as the long form the stored abstracts give it (the algorithm of
Schwartz and Hearst, PSB 2003: the short form's letters are matched, last to first, in the words before the
parenthesis, the first letter at the start of a word). Where abstracts define one short form in several ways
("SSI": surgical site infection, supplemental security income), the definition whose abstract shares most
words with the question wins.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from evidence.text import content_terms

MAX_TERMS = 4  # shorthand looked up per question (one query reads them all)


def long_form(short: str, before: str) -> str | None:
    """Return the long form that `short` abbreviates at the end of `before` ("... chronic low back pain"), or None.

    The short form's letters and digits are found in order, from the last, in at most min(|short| + 5, 2|short|)
    words before it; its first character must start a word. A long form that contains the short form itself
    ("LBP group") is no definition.
    """
    characters = [ch.lower() for ch in short if ch.isalnum()]
    if len(characters) < 2 or not characters[0].isalpha():
        return None
    words = before.split()[-min(len(short) + 5, len(short) * 2) :]
    text = " ".join(words)
    position = len(text) - 1
    for index in range(len(characters) - 1, -1, -1):
        wanted = characters[index]
        while position >= 0 and (
            text[position].lower() != wanted or (index == 0 and position > 0 and text[position - 1].isalnum())
        ):
            position -= 1
        if position < 0:
            return None
        position -= 1
    start = text.rfind(" ", 0, position + 2) + 1
    found = text[start:].strip(" ,;:.-")
    if not found or short.lower() in found.lower().split():
        return None
    return found


def definitions(text: str, short: str) -> list[str]:
    """Return the long forms, lower-cased, that `text` defines `short` as ("low back pain (LBP)", "(LBPs)")."""
    pattern = re.compile(rf"\({re.escape(short)}s?[);,]")
    found = []
    for match in pattern.finditer(text):
        defined = long_form(short, text[: match.start()])
        if defined:
            found.append(" ".join(defined.lower().split()))
    return found


@dataclass(frozen=True)
class Definition:
    """A short form, the long form the stored abstracts give it, and how many abstracts do."""

    short: str
    long: str
    abstracts: int


def best_definition(short: str, texts: Iterable[str], question: str) -> Definition | None:
    """Return the definition of `short` in `texts` (one text per abstract) that fits `question` best, or None.

    The fit of a long form is how many of the question's topic words its defining abstracts share; the number
    of abstracts defining it breaks a tie.
    """
    asked = set(content_terms(question))
    counts: Counter[str] = Counter()
    fit: Counter[str] = Counter()
    for text in texts:
        found = set(definitions(text, short))
        if not found:
            continue
        shared = len(asked & set(content_terms(text)))
        for defined in found:
            counts[defined] += 1
            fit[defined] = max(fit[defined], shared)
    if not counts:
        return None
    chosen = max(counts, key=lambda defined: (fit[defined], counts[defined], defined))
    return Definition(short, chosen, counts[chosen])

