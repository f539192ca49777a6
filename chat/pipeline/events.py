"""What the answer pipeline streams: progress, scrubbed text, a reset, and the final result."""

from __future__ import annotations

from dataclasses import dataclass

from chat.pipeline.result import AnswerResult


@dataclass(frozen=True)
class StatusEvent:
    """A pipeline step started (shown as progress while the answer is prepared)."""

    step: str
    message: str


@dataclass(frozen=True)
class DeltaEvent:
    """Scrubbed answer text to append to the preview."""

    text: str


@dataclass(frozen=True)
class ResetEvent:
    """Discard the preview (the provider failed and the answer is being composed again)."""

    reason: str


@dataclass(frozen=True)
class DoneEvent:
    """The verified answer; always the last event."""

    result: AnswerResult


PipelineEvent = StatusEvent | DeltaEvent | ResetEvent | DoneEvent
