"""Split abstracts into sentence-aligned chunks of a few hundred tokens: the unit of retrieval and citation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evidence.sentences import split_sentences
from pubmed.parsers import AbstractSection

# ~140 words ≈ 200 word pieces: with the title prepended a chunk stays inside the embedder's
# 256-token window, so no text is silently truncated away.
CHUNK_MAX_WORDS = 140

@dataclass(frozen=True)
class Chunk:
    ordinal: int
    section: str
    text: str


def _word_count(text: str) -> int:
    return len(text.split())


def chunk_abstract(*, title: str, sections: Sequence[AbstractSection], abstract: str = "",
                   max_words: int = CHUNK_MAX_WORDS) -> list[Chunk]:
    """Return the abstract's chunks: whole sentences, section labels kept, sizes balanced.

    An abstract with no text yields one chunk holding the title, so every stored record can be
    found and cited. A single sentence longer than `max_words` becomes a chunk of its own.
    """
    units: list[tuple[str, str]] = []  # (section label, sentence with the label on its first sentence)
    if sections:
        for section in sections:
            for index, sentence in enumerate(split_sentences(section.text)):
                prefix = f"{section.label}: " if section.label and index == 0 else ""
                units.append((section.label, prefix + sentence))
    elif abstract.strip():
        units = [("", sentence) for sentence in split_sentences(abstract)]
    if not units:
        return [Chunk(ordinal=0, section="", text=title.strip())] if title.strip() else []
    total = sum(_word_count(text) for _, text in units)
    count = max(1, math.ceil(total / max_words))
    target = total / count
    chunks: list[Chunk] = []
    current: list[tuple[str, str]] = []
    words = 0
    for label, sentence in units:
        size = _word_count(sentence)
        # Close the chunk at the balanced target size, or before it would exceed the maximum.
        if current and (words + size > max_words or words >= target):
            chunks.append(_make_chunk(len(chunks), current))
            current, words = [], 0
        current.append((label, sentence))
        words += size
    if current:
        chunks.append(_make_chunk(len(chunks), current))
    return chunks


def _make_chunk(ordinal: int, units: list[tuple[str, str]]) -> Chunk:
    labels = list(dict.fromkeys(label for label, _ in units if label))
    return Chunk(ordinal=ordinal, section=", ".join(labels)[:200], text=" ".join(text for _, text in units))


def embedding_text(*, title: str, chunk_text: str) -> str:
    """Return what is embedded for a chunk: the title gives every passage its study's context."""
    if not title or chunk_text == title:
        return chunk_text
    return f"{title}\n{chunk_text}"
