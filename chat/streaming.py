"""Server-sent events for a reply: the same stream serves the chat page and the API.

Events: `meta` (question stored), `status` (pipeline step), `delta` (scrubbed text; on the pages also
`html`, the paragraphs completed by this delta rendered by the answer renderer, to append to the
preview, and `tail`, the paragraph still being written), `reset` (discard the preview), `done` (the
stored, verified answer), `error`.
A synchronous iterator is served as is under WSGI (runserver, gunicorn sync) and is stepped through
`sync_to_async` under ASGI, so the answer streams in both and never pins an event-loop thread.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import structlog
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

from chat.pipeline import DeltaEvent, ResetEvent, StatusEvent
from chat.rendering import render_preview_html
from chat.services.conversations import AnswerSaved, QuestionSaved, ReplyEvent

logger = structlog.get_logger(__name__)

EVENT_STREAM = "text/event-stream"
STREAM_FAILED_MESSAGE = (
    "The answer could not be finished because of a problem on our side; your question is saved. "
    "Reload the page to see it, and ask again."
)


def sse(event: str, data: dict[str, Any]) -> bytes:
    """Encode one server-sent event (JSON data on a single line)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def wants_stream(request: HttpRequest) -> bool:
    return request.GET.get("stream") == "1" or EVENT_STREAM in request.headers.get("Accept", "")


class Preview:
    """The streamed preview so far: completed paragraphs are rendered like the answer, the last one is text."""

    def __init__(self) -> None:
        self.text = ""
        self.rendered_upto = 0

    def add(self, delta: str) -> dict[str, str]:
        """Return the `delta` event's preview fields: `html` of the paragraphs it completed, and `tail`.

        Each paragraph (Markdown block) is rendered once, when the blank line after it arrives, so a
        token-by-token stream costs one rendering per paragraph, not one per token or per line.
        """
        self.text += delta
        end = self.text.rfind("\n\n", self.rendered_upto)
        complete = end + 2 if end >= 0 else self.rendered_upto
        fields = {"tail": self.text[complete:]}
        if complete > self.rendered_upto:
            fields["html"] = str(render_preview_html(self.text[self.rendered_upto : complete]))
            self.rendered_upto = complete
        return fields


def reply_stream(
    events: Iterator[ReplyEvent],
    *,
    meta: Callable[[QuestionSaved], dict[str, Any]],
    done: Callable[[AnswerSaved], dict[str, Any]],
    preview: bool = False,
) -> Iterator[bytes]:
    """Turn reply events into SSE bytes; `meta` and `done` build the payloads of those two events.

    With `preview` (the pages), each delta also carries the rendered preview fields (`Preview.add`).
    """
    yield b": stream open\n\n"
    rendered = Preview() if preview else None
    try:
        for event in events:
            if isinstance(event, QuestionSaved):
                yield sse("meta", meta(event))
            elif isinstance(event, StatusEvent):
                yield sse("status", {"step": event.step, "message": event.message})
            elif isinstance(event, DeltaEvent):
                yield sse("delta", {"text": event.text, **(rendered.add(event.text) if rendered else {})})
            elif isinstance(event, ResetEvent):
                rendered = Preview() if preview else None
                yield sse("reset", {"reason": event.reason})
            elif isinstance(event, AnswerSaved):
                yield sse("done", done(event))
    except Exception:  # the reply service already stored a failure message; tell the client in plain words
        logger.exception("answer_stream_failed")
        yield sse("error", {"code": "internal_error", "message": STREAM_FAILED_MESSAGE})
    finally:
        getattr(events, "close", lambda: None)()


def _logged(chunks: Iterator[bytes], context: dict[str, str]) -> Iterator[bytes]:
    """Bind the request's log context around every step: the stream runs after the middleware returned."""
    iterator = iter(chunks)
    try:
        while True:
            structlog.contextvars.bind_contextvars(**context)
            try:
                chunk = next(iterator)
            except StopIteration:
                return
            finally:
                structlog.contextvars.unbind_contextvars(*context)
            yield chunk
    finally:
        # A listener that left closes us: close the reply too, so it can finish and store the answer.
        structlog.contextvars.bind_contextvars(**context)
        try:
            getattr(iterator, "close", lambda: None)()
        finally:
            structlog.contextvars.unbind_contextvars(*context)


def _asynchronous(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """Step a synchronous stream from async code; closing it (client gone) closes the stream in its thread.

    Closing matters: it lets the reply finish and store the answer in a thread where the ORM may run.
    """

    def advance() -> bytes | None:
        return next(chunks, None)

    step = sync_to_async(advance, thread_sensitive=True)
    close = sync_to_async(getattr(chunks, "close", lambda: None), thread_sensitive=True)

    async def stream() -> AsyncIterator[bytes]:
        try:
            while True:
                chunk = await step()
                if chunk is None:
                    return
                yield chunk
        finally:
            await close()

    return stream()


def event_stream_response(request: HttpRequest, chunks: Iterator[bytes]) -> StreamingHttpResponse:
    """Return a streaming SSE response suited to the server the request came through."""
    chunks = _logged(chunks, {"request_id": getattr(request, "request_id", ""), "path": request.path})
    content = _asynchronous(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(content, content_type=EVENT_STREAM)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response
