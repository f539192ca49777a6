"""Source text is data: the sentences of stored or quoted text that speak to an AI are dropped before anything reads
them, and what the store has already screened is not read again.

The detector is `evidence.injection`; this module applies it line by line and sentence by sentence, and keeps the
record of what was screened under which version (`screening_version`), so that a stored chunk found free of
instructions when it was stored (`AbstractChunk.instructions_screened_by`) is trusted until the detector changes.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from evidence import characters, injection, injection_classifier, injection_decoding, injection_semantic, sentences
from evidence.injection import is_instruction, is_role_marker
from evidence.sentences import split_sentences

# A structured abstract's section label ("RESULTS: ..."), which belongs to the line, not to its first sentence.
_SECTION_LABEL = re.compile(r"^([A-Z][A-Z ,&/-]{2,40}):\s+")


def _labelled(line: str) -> tuple[str, str]:
    """Return (label prefix, rest) of a line; a role marker ("SYSTEM:") is no section label and stays."""
    match = _SECTION_LABEL.match(line)
    if match is None or is_role_marker(match.group(0)):
        return "", line
    return match.group(0), line[match.end() :]


def instruction_sentences(text: str) -> list[str]:
    """Return the sentences of `text` that give instructions to a language model (`evidence.injection`)."""
    return [
        sentence
        for line in text.splitlines()
        for sentence in split_sentences(_labelled(line)[1])
        if is_instruction(sentence)
    ]


def without_instructions(text: str) -> str:
    """Return `text` without the sentences that give instructions to a language model, lines kept.

    A stored abstract, a library field, a trial record or a tool result that carries such a sentence is
    data; the sentence is dropped so that neither the reader, the model nor the support check sees it.
    A text the store screened under the current `screening_version` and found free of them
    (`remember_screened`) is returned as it is without being read again.
    """
    if text in _SCREENED_FREE:
        return text
    return _without_instructions(text)


@lru_cache(maxsize=8192)
def _without_instructions(text: str) -> str:
    if not text:
        return text
    lines = []
    for line in text.splitlines():
        label, body = _labelled(line)
        sentences = split_sentences(body)
        kept = [sentence for sentence in sentences if not is_instruction(sentence)]
        if len(kept) == len(sentences):
            lines.append(line)
        elif kept:
            lines.append(label + " ".join(kept))
    return "\n".join(lines)


@lru_cache(maxsize=1)
def screening_version() -> str:
    """Return a fingerprint of everything `without_instructions` depends on: this module, the sentence splitter, the
    detector's rules and code, and its trained weights. A text screened under another version is read again."""
    digest = hashlib.sha256()
    modules = (
        sys.modules[__name__],
        sentences,
        characters,
        injection,
        injection_classifier,
        injection_decoding,
        injection_semantic,
    )
    model = injection_classifier.MODEL_DIR
    files = (model / "weights.npz", model / injection_semantic.SEMANTIC_FILE, model / "metadata.json")
    for path in (*(Path(str(module.__file__)) for module in modules), *files):
        digest.update(path.read_bytes())
    # The semantic half reads the embedder's vectors: another embedding model is another screening.
    digest.update(str(getattr(settings, "EMBEDDING_MODEL", "")).encode())
    return digest.hexdigest()[:32]


def screened_version(*texts: str) -> str:
    """Return `screening_version()` when every one of `texts` is free of instructions, else "" (what the
    store records on a chunk, so that answers need not screen it again)."""
    return screening_version() if all(_without_instructions(text) == text for text in texts) else ""


# Texts the store screened under the current version and found free of instructions (a bounded memo,
# filled from stored chunks as they are read: screening every retrieved chunk again was a fifth of an answer).
_SCREENED_FREE: dict[str, None] = {}
_SCREENED_FREE_SIZE = 16384
_screened_lock = threading.Lock()


def remember_screened(texts: Iterable[str], version: str) -> None:
    """Record `texts` as free of instructions when `version` is the current `screening_version()`."""
    if version != screening_version():
        return
    with _screened_lock:
        for text in texts:
            if len(_SCREENED_FREE) >= _SCREENED_FREE_SIZE:
                del _SCREENED_FREE[next(iter(_SCREENED_FREE))]
            _SCREENED_FREE[text] = None
