"""OpenAI-compatible chat-completions provider (Ollama, vLLM, llama.cpp): its wire format for the shared tool loop."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import openai
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


def _function_tools(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": spec["name"], "description": spec["description"], "parameters": spec["input_schema"]},
        }
        for spec in specs
    ]


class OpenAICompatibleProvider:
    """Write answers with any server speaking the OpenAI chat-completions API, tools included."""

    name = "openai"

    def __init__(self, *, api_key: str, base_url: str | None, timeout: float, max_retries: int) -> None:
        # Local servers ignore the key, but the SDK insists on one.
        self.client = openai.OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self.timeout = timeout
        self.base_url = base_url

    def generate(self, request: GenerationRequest) -> Iterator[ProviderEvent]:
        """Yield text deltas and tool activity, then one `Generation`; raise ProviderError on failure."""
        return run_tool_loop(self, request)

    # --- wire format for the tool loop ---------------------------------------------------------

    def opening_messages(self, request: GenerationRequest, user_turn: str) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": request.system_prompt},
            *request.history,
            {"role": "user", "content": user_turn},
        ]

    def stream_turn(self, turn: TurnRequest) -> Generator[TextDelta, None, ModelTurn]:
        settings = turn.request.settings
        params: dict[str, Any] = {
            "model": settings.model,
            "messages": turn.messages,
            "max_tokens": settings.max_tokens,
            "temperature": settings.temperature,
            "stream": True,
        }
        if turn.tools:
            # Servers reject tool_choice without tools.
            params["tools"] = _function_tools(turn.tools)
            params["tool_choice"] = "none" if turn.last_round else "auto"
        usage = {"input_tokens": 0, "output_tokens": 0}
        text, calls, finish_reason = yield from self._stream_round(params, usage)
        return ModelTurn(
            text=text,
            stop_reason=finish_reason,
            assistant_message={
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": call["arguments"]},
                    }
                    for call in calls
                ],
            },
            tool_calls=[ToolCall(id=call["id"], name=call["name"], arguments=call["arguments"]) for call in calls],
            input_tokens=usage["input_tokens"],
            output_tokens=usage["output_tokens"],
        )

    def tool_result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [
            {
                "role": "tool",
                "tool_call_id": result.call_id,
                "content": wrap_tool_result(name=result.name, content=result.content),
            }
            for result in results
        ]

    def _stream_round(
        self, params: dict[str, Any], usage: dict[str, int]
    ) -> Generator[TextDelta, None, tuple[str, list[dict[str, str]], str]]:
        """Stream one completion; yield text deltas; return (text, tool calls, finish reason)."""
        text = ""
        calls: dict[int, dict[str, str]] = {}
        finish_reason = ""
        chunks = 0
        try:
            stream = self.client.chat.completions.create(**params)
        except openai.APIError as exc:
            raise self._provider_error(exc) from exc
        try:
            with stream:
                for chunk in stream:
                    chunks += 1
                    if getattr(chunk, "usage", None):
                        usage["input_tokens"] += int(chunk.usage.prompt_tokens or 0)
                        usage["output_tokens"] += int(chunk.usage.completion_tokens or 0)
                    if not chunk.choices:
                        continue
                    choice = chunk.choices[0]
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text += delta.content
                        yield TextDelta(delta.content)
                    for call in (delta.tool_calls or []) if delta is not None else []:
                        entry = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                        if call.id:
                            entry["id"] = call.id
                        if call.function is not None:
                            entry["name"] += call.function.name or ""
                            entry["arguments"] += call.function.arguments or ""
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        except openai.APIError as exc:
            raise self._provider_error(exc) from exc
        except (ValueError, KeyError, AttributeError, TypeError) as exc:
            raise ProviderError(
                "llm_malformed_output",
                f"The OpenAI-compatible server returned output MedCite could not read ({type(exc).__name__}).",
            ) from exc
        if not chunks:
            raise ProviderError(
                "llm_malformed_output", "The OpenAI-compatible server answered without any completion chunk."
            )
        ordered = [calls[index] for index in sorted(calls)]
        for number, call in enumerate(ordered):
            call["id"] = call["id"] or f"call_{number}"
        return text, ordered, finish_reason

    def complete_json(
        self, prompt: str, schema: dict[str, Any], *, model: str, max_tokens: int = 1024
    ) -> dict[str, Any]:
        """Return the model's JSON object for `prompt` (no tools, no streaming); raise ProviderError."""
        try:
            completion = self.client.chat.completions.create(
                model=model,
                max_tokens=max_tokens,
                temperature=0,
                response_format={"type": "json_object"},
                messages=[
                    {"role": "system", "content": JSON_SYSTEM_PROMPT},
                    {"role": "user", "content": json_request_prompt(prompt, schema)},
                ],
            )
        except openai.APIError as exc:
            raise self._provider_error(exc) from exc
        choices = getattr(completion, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        return parse_json_object(text, provider=self.name)

    def _provider_error(self, exc: openai.APIError) -> ProviderError:
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(
                "llm_timeout", f"The OpenAI-compatible server did not answer within {self.timeout:g} s (timeout)."
            )
        if isinstance(exc, openai.APIConnectionError):
            logger.warning(
                "openai_compatible_unreachable", base_url=self.base_url, error=f"{type(exc).__name__}: {exc}"
            )
            return ProviderError("llm_unreachable", "The language model server could not be reached.")
        if isinstance(exc, openai.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            error = body.get("error", body)
            detail = str(error.get("message", "")) if isinstance(error, dict) else str(error or "")
            return status_error(provider=self.name, status=exc.status_code, detail=detail)
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(
                "llm_malformed_output", "The OpenAI-compatible server returned a response MedCite could not read."
            )
        # An error object sent inside a 200 stream (out of memory, model unloaded, ...).
        message = str(getattr(exc, "message", "") or exc).rstrip(".")
        return ProviderError("llm_server_error", f"The OpenAI-compatible server reported an error: {message}.")
