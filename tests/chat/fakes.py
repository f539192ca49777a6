"""Fake LLM servers on 127.0.0.1 speaking the real wire formats, driven by scripts.

`FakeAnthropic` serves `POST /v1/messages` as the Anthropic Messages API does with
`stream: true` (message_start, content_block_start/delta/stop, message_delta, message_stop,
ping, and `error` events), or HTTP errors with Anthropic's error body. `FakeOpenAI` serves
`POST /v1/chat/completions` as chat.completion.chunk server-sent events ending in `[DONE]`.
Each request takes the next step of the script; every request body is recorded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

CHUNK = 14


@dataclass
class Text:
    text: str


@dataclass
class ToolUse:
    id: str
    name: str
    input: dict[str, Any] | None = None
    raw_json: str | None = None  # sent verbatim as input_json_delta (to script malformed input)


@dataclass
class Reply:
    """One streamed model turn."""

    blocks: list[Text | ToolUse]
    stop_reason: str = "end_turn"
    delay: float = 0.0
    chunk_delay: float = 0.0  # pause between text deltas, to make streaming observable


@dataclass
class HttpError:
    status: int
    error_type: str
    message: str


@dataclass
class StreamError:
    """Start streaming text, then send an `error` event mid-stream."""

    text: str
    error_type: str
    message: str


@dataclass
class Garbage:
    """A 200 response with a body that is not the promised format."""

    body: str
    content_type: str = "text/event-stream"


Step = Reply | HttpError | StreamError | Garbage


def _sse(event: str | None, data: dict[str, Any] | str) -> str:
    payload = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


def _pieces(text: str) -> list[str]:
    return [text[index : index + CHUNK] for index in range(0, len(text), CHUNK)] or [""]


@dataclass
class _Scripted:
    server: HTTPServer
    path: str
    steps: list[Step] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server.expect_request(self.path, method="POST").respond_with_handler(self._handle)

    def script(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests.clear()

    def _handle(self, request: Request) -> Response:
        self.requests.append(json.loads(request.get_data(as_text=True)))
        if not self.steps:
            return self._http_error(HttpError(500, "api_error", "The test script has no step left for this request."))
        step = self.steps.pop(0)
        if isinstance(step, HttpError):
            return self._http_error(step)
        if isinstance(step, Garbage):
            return Response(step.body, status=200, content_type=step.content_type)
        if isinstance(step, Reply) and step.delay:
            time.sleep(step.delay)
        if isinstance(step, Reply) and not self.requests[-1].get("stream"):
            # A non-streaming call (e.g. the JSON completion for PICO extraction) gets one message body.
            text = "".join(block.text for block in step.blocks if isinstance(block, Text))
            return Response(json.dumps(self._message(text)), status=200, content_type="application/json")
        return Response(self._stream(step), status=200, content_type="text/event-stream")

    def _message(self, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def _http_error(self, step: HttpError) -> Response:
        raise NotImplementedError

    def _stream(self, step: Reply | StreamError) -> Iterator[str]:
        raise NotImplementedError


class FakeAnthropic(_Scripted):
    """The Anthropic Messages API, streaming (and a plain message body for non-streaming calls)."""

    def __init__(self, server: HTTPServer) -> None:
        super().__init__(server=server, path="/v1/messages")

    def _message(self, text: str) -> dict[str, Any]:
        return {
            "id": f"msg_test_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": self.requests[-1].get("model", "claude-test"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 50, "output_tokens": max(len(text) // 4, 1)},
        }

    def _http_error(self, step: HttpError) -> Response:
        body = {"type": "error", "error": {"type": step.error_type, "message": step.message}, "request_id": "req_test"}
        return Response(json.dumps(body), status=step.status, content_type="application/json")

    def _stream(self, step: Reply | StreamError) -> Iterator[str]:
        number = len(self.requests)
        yield _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_test_{number}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 120, "output_tokens": 1},
                },
            },
        )
        yield _sse("ping", {"type": "ping"})
        if isinstance(step, StreamError):
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
            yield _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": step.text}},
            )
            yield _sse("error", {"type": "error", "error": {"type": step.error_type, "message": step.message}})
            return
        for index, block in enumerate(step.blocks):
            if isinstance(block, Text):
                yield _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
                for piece in _pieces(block.text):
                    if step.chunk_delay:
                        time.sleep(step.chunk_delay)
                    yield _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                    )
            else:
                yield _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "tool_use", "id": block.id, "name": block.name, "input": {}},
                    },
                )
                raw = block.raw_json if block.raw_json is not None else json.dumps(block.input or {})
                for piece in _pieces(raw):
                    yield _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": step.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 42},
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})


class FakeOpenAI(_Scripted):
    """An OpenAI-compatible chat-completions server (as Ollama, vLLM and llama.cpp serve it), streaming."""

    def __init__(self, server: HTTPServer) -> None:
        super().__init__(server=server, path="/v1/chat/completions")

    def _message(self, text: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-test-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1732280000,
            "model": self.requests[-1].get("model", "llama-test"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": max(len(text) // 4, 1), "total_tokens": 60},
        }

    def _http_error(self, step: HttpError) -> Response:
        body = {"error": {"message": step.message, "type": step.error_type, "param": None, "code": None}}
        return Response(json.dumps(body), status=step.status, content_type="application/json")

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> str:
        return _sse(
            None,
            {
                "id": f"chatcmpl-test-{len(self.requests)}",
                "object": "chat.completion.chunk",
                "created": 1732280000,
                "model": "llama-test",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            },
        )

    def _stream(self, step: Reply | StreamError) -> Iterator[str]:
        if isinstance(step, StreamError):
            yield self._chunk({"role": "assistant", "content": step.text})
            yield _sse(None, {"error": {"message": step.message, "type": step.error_type}})
            return
        yield self._chunk({"role": "assistant", "content": ""})
        calls = 0
        for block in step.blocks:
            if isinstance(block, Text):
                for piece in _pieces(block.text):
                    yield self._chunk({"content": piece})
            else:
                raw = block.raw_json if block.raw_json is not None else json.dumps(block.input or {})
                yield self._chunk(
                    {
                        "tool_calls": [
                            {
                                "index": calls,
                                "id": block.id,
                                "type": "function",
                                "function": {"name": block.name, "arguments": ""},
                            }
                        ]
                    }
                )
                for piece in _pieces(raw):
                    yield self._chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
                calls += 1
        finish = "tool_calls" if step.stop_reason == "tool_use" else "stop"
        yield self._chunk({}, finish)
        yield "data: [DONE]\n\n"
