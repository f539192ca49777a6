"""The default provider: the extractive composer, which needs no language model and no key."""

from __future__ import annotations

import re
from collections.abc import Iterator

from chat.prompts import ABSTENTION_NO_EVIDENCE
from chat.providers.base import Generation, GenerationRequest, ProviderEvent, TextDelta
from chat.providers.composer import compose_answer


class ExtractiveProvider:
    """Compose the answer from the retrieved evidence; stream it line by line."""

    name = "extractive"

    def generate(self, request: GenerationRequest) -> Iterator[ProviderEvent]:
        text = compose_answer(
            question=request.question,
            evidence=request.evidence,
            settings=request.settings,
            question_terms=request.question_terms,
            weights=request.term_weights,
            concepts=request.concepts,
            asks=request.asks,
            focus=request.focus,
            patient=request.patient,
            parts=request.parts,
        )
        for piece in re.split(r"(?<=\n)", text):
            if piece:
                yield TextDelta(piece)
        yield Generation(
            text=text, rounds=0, stop_reason="composed", details={"abstained": text == ABSTENTION_NO_EVIDENCE}
        )
