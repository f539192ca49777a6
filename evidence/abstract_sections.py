"""An abstract chunk's sentences with the section each stands under ("RESULTS: ..."), for the composer."""

from __future__ import annotations

import re

from evidence.sentence_roles import sentence_roles
from evidence.sentences import split_sentences

# A section label inside an abstract chunk ("RESULTS: ..."), at a line start or after a sentence.
_INLINE_LABEL = re.compile(r"(?:^|(?<=[.!?])\s+)([A-Z][A-Z ,&/-]{2,40}):\s+")


def abstract_sentences(text: str, *, section: str = "", first_chunk: bool | None = None) -> list[tuple[str, str]]:
    """Return (section label in lower case, sentence) for each sentence of an abstract chunk.

    Labels ("RESULTS: ...") may start a line or follow a sentence inside the chunk; sentences before the first
    label take `section` when the chunk belongs to a single section. A chunk of an abstract without labels, when
    the caller says whether it opens the abstract (`first_chunk`), has each sentence's part read by the
    sentence-role model (`evidence.sentence_roles`: background, methods, results or conclusions)."""
    default = section.lower() if section and "," not in section else ""
    found: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n+", text):
        pieces = _INLINE_LABEL.split(paragraph)
        # split() with one capturing group alternates: text, label, text, label, text...
        label = default
        for index, piece in enumerate(pieces):
            if index % 2 == 1:
                label = piece.strip().lower()
                continue
            found.extend((label, sentence) for sentence in split_sentences(piece.strip()) if sentence)
    if first_chunk is None or section or any(label for label, _ in found):
        return found
    sentences = [sentence for _, sentence in found]
    return list(zip(sentence_roles().roles(sentences, first_chunk=first_chunk), sentences, strict=True))
