"""Anthropic Messages API provider (official SDK): the Messages wire format for the shared tool loop."""

from __future__ import annotations

import inspect
import json
from collections.abc import Generator, Iterator
from typing import Any

import anthropic
import structlog

from chat.prompts import wrap_tool_result
from chat.providers.base import (
    GenerationRequest,
    ProviderError,
    ProviderEvent,
    TextDelta,
    status_error,
)
from chat.providers.json_output import JSON_SYSTEM_PROMPT, json_request_prompt, parse_json_object
from chat.providers.tool_loop import ModelTurn, ToolCall, TurnRequest, run_tool_loop
from chat.tools import ToolResult

logger = structlog.get_logger(__name__)


def _error_detail(exc: anthropic.APIStatusError) -> tuple[int, str]:
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    raw_error = body.get("error")
    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
    status = exc.status_code
    # An `error` event inside a 200 stream carries the real condition in its type.
    if error.get("type") == "overloaded_error":
        status = 529
    elif status < 400:
        status = 500
    return status, str(error.get("message") or "")


class AnthropicProvider:
    """Write answers with Claude through the Messages API, executing tool calls between rounds."""

    name = "anthropic"

    def __init__(self, *, api_key: str, base_url: str | None, timeout: float, max_retries: int) -> None:
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self.timeout = timeout
        # Recent SDKs dropped `temperature` from messages.create for models that fix it.
        self.accepts_temperature = "temperature" in inspect.signature(self.client.messages.create).parameters

    def generate(self, request: GenerationRequest) -> Iterator[ProviderEvent]:
        """Yield text deltas and tool activity, then one `Generation`; raise ProviderError on failure."""
        return run_tool_loop(self, request)

    # --- wire format for the tool loop ---------------------------------------------------------

    def opening_messages(self, request: GenerationRequest, user_turn: str) -> list[dict[str, Any]]:
        return [*request.history, {"role": "user", "content": user_turn}]

    def stream_turn(self, turn: TurnRequest) -> Generator[TextDelta, None, ModelTurn]:
        settings = turn.request.settings
        params: dict[str, Any] = {
            "model": settings.model,
            "max_tokens": settings.max_tokens,
            "system": turn.request.system_prompt,
            "messages": turn.messages,
        }
        if turn.tools:
            params["tools"] = turn.tools
        if self.accepts_temperature:
            params["temperature"] = settings.temperature
        if turn.tools and turn.last_round:
            params["tool_choice"] = {"type": "none"}
        usage = {"input_tokens": 0, "output_tokens": 0}
        blocks, stop_reason = yield from self._stream_round(params, usage)
        return ModelTurn(
            text="".join(block["text"] for block in blocks if block["type"] == "text"),
            stop_reason=stop_reason,
            assistant_message={"role": "assistant", "content": [self._assistant_block(block) for block in blocks]},
            tool_calls=[
                ToolCall(
                    id=block["id"],
                    name=block["name"],
                    arguments=block["input_json"] if block["input_json"].strip() else block["input"],
                )
                for block in blocks
                if block["type"] == "tool_use"
            ],
            wants_tools=stop_reason == "tool_use",
            input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"],
        )

    def tool_result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        # Every result of one turn goes back in a single user message.
        return [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": result.call_id,
                        "content": wrap_tool_result(name=result.name, content=result.content),
                        "is_error": result.is_error,
                    }
                    for result in results
                ],
            }
        ]

    @staticmethod
    def _assistant_block(block: dict[str, Any]) -> dict[str, Any]:
        if block["type"] == "text":
            return {"type": "text", "text": block["text"]}
        arguments = block["input"]
        try:
            parsed = json.loads(block["input_json"]) if block["input_json"].strip() else arguments
        except json.JSONDecodeError:
            parsed = {}
        return {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": parsed if isinstance(parsed, dict) else {},
        }

    def _stream_round(
        self, params: dict[str, Any], usage: dict[str, int]
    ) -> Generator[TextDelta, None, tuple[list[dict[str, Any]], str]]:
        """Stream one Messages API call; yield text deltas; return (content blocks, stop reason)."""
        blocks: dict[int, dict[str, Any]] = {}
        stop_reason = ""
        started = False
        try:
            stream = self.client.messages.create(**params, stream=True)
        except anthropic.APIError as exc:
            raise self._provider_error(exc) from exc
        try:
            with stream:
                for event in stream:
                    kind = getattr(event, "type", "")
                    if kind == "message_start":
                        started = True
                        usage["input_tokens"] += int(getattr(event.message.usage, "input_tokens", 0) or 0)
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "text":
                            blocks[event.index] = {"type": "text", "text": block.text or ""}
                        elif block.type == "tool_use":
                            blocks[event.index] = {
                                "type": "tool_use",
                                "id": block.id,
                                "name": block.name,
                                "input": block.input if isinstance(block.input, dict) else {},
                                "input_json": "",
                            }
                    elif kind == "content_block_delta":
                        delta = event.delta
                        target = blocks.get(event.index)
                        if delta.type == "text_delta" and target is not None and target["type"] == "text":
                            target["text"] += delta.text
                            yield TextDelta(delta.text)
                        elif delta.type == "input_json_delta" and target is not None and target["type"] == "tool_use":
                            target["input_json"] += delta.partial_json
                    elif kind == "message_delta":
                        stop_reason = event.delta.stop_reason or stop_reason
                        usage["output_tokens"] += int(getattr(event.usage, "output_tokens", 0) or 0)
        except anthropic.APIError as exc:
            raise self._provider_error(exc) from exc
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            # The stream parsed as SSE but its events are not what the Messages API sends.
            raise ProviderError(
                "llm_malformed_output", f"Anthropic returned output MedCite could not read ({type(exc).__name__})."
            ) from exc
        if not started:
            raise ProviderError(
                "llm_malformed_output",
                "Anthropic answered without a message (the response was not a Messages API stream).",
            )
        return [blocks[index] for index in sorted(blocks)], stop_reason

    def complete_json(
        self, prompt: str, schema: dict[str, Any], *, model: str, max_tokens: int = 1024
    ) -> dict[str, Any]:
        """Return the model's JSON object for `prompt` (no tools, no streaming); raise ProviderError."""
        try:
            message = self.client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=JSON_SYSTEM_PROMPT,
                messages=[{"role": "user", "content": json_request_prompt(prompt, schema)}],
            )
        except anthropic.APIError as exc:
            raise self._provider_error(exc) from exc
        text = "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")
        return parse_json_object(text, provider=self.name)

    def _provider_error(self, exc: anthropic.APIError) -> ProviderError:
        if isinstance(exc, anthropic.APITimeoutError):
            return ProviderError("llm_timeout", f"Anthropic did not answer within {self.timeout:g} s (timeout).")
        if isinstance(exc, anthropic.APIConnectionError):
            logger.warning("anthropic_unreachable", error=f"{type(exc).__name__}: {exc}")
            return ProviderError("llm_unreachable", "Anthropic could not be reached.")
        if isinstance(exc, anthropic.APIStatusError):
            status, detail = _error_detail(exc)
            return status_error(provider=self.name, status=status, detail=detail)
        return ProviderError(
            "llm_malformed_output", f"Anthropic returned output MedCite could not read ({type(exc).__name__})."
        )
