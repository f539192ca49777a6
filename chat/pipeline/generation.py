"""Run one provider generation as page events."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from chat.pipeline.events import DeltaEvent, StatusEvent
from chat.providers.base import Generation, GenerationRequest, Provider, ProviderError, TextDelta, ToolActivity
from evidence.citations.stream import StreamScrubber


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
