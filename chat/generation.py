"""Run one provider generation as page events, and time the steps of a reply for its trace."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from chat.pipeline.events import DeltaEvent, StatusEvent
from chat.providers.base import Generation, GenerationRequest, Provider, ProviderError, TextDelta, ToolActivity
from evidence.citations.stream import StreamScrubber


@dataclass
class Trace:
    """The steps of one reply, each with how long it took since the previous one."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    mark: float = 0.0

    def __post_init__(self) -> None:
        self.mark = self.mark or self.started

    def add(self, step: str, label: str, detail: str, **data: Any) -> None:
        """Record a finished step with its duration and structured data."""
        self.record(step, label, detail, data)

    def record(self, step: str, label: str, detail: str, data: dict[str, Any], *, summary: str = "") -> None:
        """Record a finished step; `summary` is the reader's sentence (`chat.pipeline.trace_words`), shown with
        `label: detail` folded under it."""
        now = time.monotonic()
        entry: dict[str, Any] = {"step": step, "label": label}
        if summary:
            entry["summary"] = summary
        entry.update(detail=detail, duration_ms=int((now - self.mark) * 1000), data=data)
        self.steps.append(entry)
        self.mark = now


def generation_events(
    provider: Provider,
    request: GenerationRequest,
    scrubber: StreamScrubber,
    *,
    shown_upto: Callable[[str], int] | None = None,
) -> Iterator[DeltaEvent | StatusEvent | Generation]:
    """Yield the provider's text scrubbed of unverified identifiers, its tool activity, then its Generation.

    `shown_upto(raw text so far)` limits streaming to a prefix of the text (e.g. before a payload
    the page renders as a card); text past it is never streamed. Without it every character is
    streamed and the scrubber's tail is flushed at the end. Raises ProviderError when the provider
    ends without a final Generation.
    """
    generation: Generation | None = None
    raw, shown = "", 0
    for event in provider.generate(request):
        if isinstance(event, TextDelta):
            raw += event.text
            cut = shown_upto(raw) if shown_upto else len(raw)
            if cut > shown:
                safe = scrubber.feed(raw[shown:cut])
                shown = cut
                if safe:
                    yield DeltaEvent(safe)
        elif isinstance(event, ToolActivity):
            outcome = "failed" if event.is_error else f"{event.sources} record(s)"
            yield StatusEvent("tool", f"Tool {event.name}: {outcome}")
        elif isinstance(event, Generation):
            generation = event
    if shown_upto is None:
        tail = scrubber.flush()
        if tail:
            yield DeltaEvent(tail)
    if generation is None:
        raise ProviderError("llm_malformed_output", f"The {provider.name} provider ended without an answer.")
    yield generation
