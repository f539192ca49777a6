"""The words of a tray request: what is request phrasing, and the topic phrases left to search for."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence import language

# Words of the request itself or no topic at all: never part of what is searched for.
REQUEST_WORDS = (*language.NOT_TOPIC, language.WordClass.REQUEST.value)

ASKS_FOR_SEARCH = re.compile(
    r"\b(?:trials?|stud(?:y|ies)|papers?|articles?|literature|publications?|search|find|look(?:ing)?\s+for|"
    r"quer(?:y|ies)|show\s+me)\b",
    re.IGNORECASE,
)


@dataclass
class RequestText:
    """Request text with the spans already understood blanked out, so later rules skip them."""

    text: str
    taken: list[tuple[int, int]] = field(default_factory=list)

    def take(self, start: int, end: int) -> None:
        self.taken.append((start, end))

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.taken)

    def remaining(self) -> str:
        chars = list(self.text)
        for start, end in self.taken:
            for index in range(start, end):
                chars[index] = " "
        return "".join(chars)


def free_terms(remaining: str) -> list[str]:
    """Return the free-text phrases left after the understood parts: runs of topic words."""
    phrases: list[str] = []
    current: list[str] = []
    never_searched = language.words(*REQUEST_WORDS)
    for token in re.findall(r"[A-Za-z0-9][A-Za-z0-9'\-]*|[^\sA-Za-z0-9]", remaining):
        word = token.lower().strip("'")
        is_topic = token[0].isalnum() and word not in never_searched and not word.isdigit() and len(word) > 1
        if is_topic:
            current.append(token)
            continue
        if current:
            phrases.append(" ".join(current))
            current = []
    if current:
        phrases.append(" ".join(current))
    # Long runs are usually two concepts ("apixaban warfarin"); keep phrases of up to four words.
    split: list[str] = []
    for phrase in phrases:
        words = phrase.split()
        split.extend(" ".join(words[index : index + 4]) for index in range(0, len(words), 4))
    return list(dict.fromkeys(split))
