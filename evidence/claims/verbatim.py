"""Accept a claim that a cited passage states word for word, before any model is asked."""

from __future__ import annotations

from collections.abc import Sequence

from evidence.claims.verdicts import Passage, Quote


def _folded(text: str) -> str:
    return " ".join(text.split()).lower()


def verbatim_quote(claim: str, passages: Sequence[Passage]) -> Quote | None:
    """Return `claim` quoted from the first passage that contains it word for word, else None.

    Case, runs of white space and a final full stop are ignored. The extractive composer quotes its
    sources exactly, and a reader checking a pasted text often copies a sentence of the abstract: such
    a claim is supported by construction, whatever a verifier would make of it.
    """
    folded = _folded(claim).rstrip(".")
    if not folded:
        return None
    for passage in passages:
        if folded in _folded(passage.text):
            return Quote(passage.doc_id, passage.chunk_id, claim)
    return None
