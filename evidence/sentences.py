"""The one sentence splitter: abstracts (chunking), answers (citation verification), the composer, screening; and
where a question asks (`asking_spans`)."""

from __future__ import annotations

import re

# Words ending in a full stop that do not end a sentence.
_ABBREVIATIONS = frozenset(
    [
        "al.",
        "e.g.",
        "i.e.",
        "vs.",
        "approx.",
        "fig.",
        "no.",
        "dr.",
        "cf.",
        "incl.",
        "ca.",
        "st.",
        "et.",
        "resp.",
        "ref.",
        "refs.",
        "ed.",
        "eds.",
        "vol.",
        "pp.",
    ]
)
# A sentence ends at . ! or ? followed by white space and something that can start a sentence.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[\"'\u27e6*_#-])")
# Citation markers written after the full stop ("... worked. [1]") belong to the sentence before.
_LEADING_MARKERS = re.compile(r"^((?:(?:\u27e6\d+\u27e7|\[\d{1,3}(?:\s*[,;\u2013-]\s*\d{1,3})*\])\s*)+)")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping "et al.", "e.g.", initials and decimals inside them.

    The one splitter for abstracts (chunking), answers (citation verification) and the composer.
    A citation marker written after a sentence's full stop stays with that sentence.
    """
    pieces: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        before = text[start : boundary.start()]
        last_word = before.rsplit(None, 1)[-1].lower() if before.strip() else ""
        if last_word in _ABBREVIATIONS or re.fullmatch(r"\(?[a-z]\.", last_word):
            continue
        pieces.append(before)
        start = boundary.end()
    pieces.append(text[start:])
    sentences: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece)
        if lead and sentences:
            sentences[-1] = f"{sentences[-1]} {lead.group(1).strip()}"
            piece = piece[lead.end() :]
        if piece.strip():
            sentences.append(piece.strip())
    return sentences


# A sentence reporting a question: "The nurse asks whether she should be switched from aspirin to apixaban."
REPORTED_QUESTION = re.compile(r"\bwhether\b|\b(?:asks?|asking|wonders?|wondering)\s+(?:if|about)\b", re.IGNORECASE)


def asking_spans(question: str, *, reported: bool = False) -> list[tuple[int, int]]:
    """Return where `question` asks: its sentences that end in a question mark; in a text with none (or with
    `reported`, beside them), each other sentence's reported question from "whether" or "asks if" on ("... now stable
    on PPI; her GP asks whether and when to restart it"); else all of it. A case tells the patient's story in
    statements, and a dose or a duration in the story is a detail of the patient, not what was asked."""
    asking: list[tuple[int, int]] = []
    told: list[tuple[int, int]] = []
    position = 0
    for sentence in split_sentences(question):
        start = question.find(sentence, position)
        if start < 0:
            continue
        position = start + len(sentence)
        if sentence.rstrip().endswith("?"):
            asking.append((start, position))
        elif found := REPORTED_QUESTION.search(sentence):
            told.append((start + found.start(), position))
    spans = sorted(asking + told) if reported else asking or told
    return spans or [(0, len(question))]


def asking_part(question: str, *, reported: bool = False) -> str:
    """Return the text of `question` that asks (`asking_spans`)."""
    return " ".join(question[start:end] for start, end in asking_spans(question, reported=reported))
