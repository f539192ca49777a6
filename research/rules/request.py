"""The words of a tray request: what is request phrasing, and the topic phrases left to search for."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evidence.text import STOPWORDS

# Words of the request itself, never part of what is searched for.
REQUEST_WORDS = frozenset(
    [
        "find",
        "search",
        "searches",
        "searching",
        "look",
        "looking",
        "show",
        "list",
        "give",
        "get",
        "fetch",
        "pull",
        "build",
        "make",
        "suggest",
        "suggestion",
        "write",
        "run",
        "query",
        "queries",
        "pubmed",
        "medline",
        "clinicaltrials",
        "gov",
        "ct",
        "registry",
        "please",
        "can",
        "could",
        "would",
        "me",
        "us",
        "i",
        "want",
        "like",
        "need",
        "some",
        "any",
        "all",
        "papers",
        "paper",
        "articles",
        "article",
        "publications",
        "publication",
        "literature",
        "research",
        "trials",
        "trial",
        "studies",
        "study",
        "registered",
        "ongoing",
        "published",
        "recent",
        "recently",
        "latest",
        "new",
        "newest",
        "good",
        "relevant",
        "related",
        "regarding",
        "concerning",
        "involving",
        "investigating",
        "looking",
        "on",
        "in",
        "for",
        "of",
        "about",
        "with",
        "that",
        "which",
        "who",
        "are",
        "is",
        "be",
        "there",
        "those",
        "these",
        "them",
        "it",
        "its",
        "from",
        "by",
        "and",
        "or",
        "to",
        "the",
        "a",
        "an",
    ]
)

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
    for token in re.findall(r"[A-Za-z0-9][A-Za-z0-9'\-]*|[^\sA-Za-z0-9]", remaining):
        word = token.lower().strip("'")
        is_topic = (
            token[0].isalnum()
            and word not in STOPWORDS
            and word not in REQUEST_WORDS
            and not word.isdigit()
            and len(word) > 1
        )
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
