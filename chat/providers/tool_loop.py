"""The one LLM tool-use loop shared by every provider that calls a model.

Each round streams one model turn; when the model asks for tools, they run (`chat.tools` or the
request's toolbox), their sources join the request's evidence, their results go back to the model,
and the next round starts. On the last round the wire format forbids tool calls; calls made anyway
are logged and not run.
A provider only translates its wire format: the opening messages, one streamed turn in the common
`ModelTurn` shape, and the messages that carry tool results back.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from chat.prompts import build_user_turn
from chat.providers.base import Generation, GenerationRequest, ProviderEvent, TextDelta, ToolActivity
from chat.tools import ToolResult, run_tool, tool_specs

logger = structlog.get_logger(__name__)


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model asked for; `arguments` is JSON text or an object, as the wire carried it."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class TurnRequest:
    """What one model call is given: the conversation so far and the tools it may call."""

    request: GenerationRequest
    messages: list[dict[str, Any]]
    # Name / description / input_schema specs; on the last round the model must not call them.
    tools: list[dict[str, Any]]
    last_round: bool


@dataclass
class ModelTurn:
    """One streamed model call, in the shape every wire format is translated into."""

    text: str
    stop_reason: str
    # The turn as the wire format replays it in the next request's messages.
    assistant_message: dict[str, Any]
    tool_calls: list[ToolCall] = field(default_factory=list)
    # False when the model stopped for another reason (e.g. max tokens) with calls half written.
    wants_tools: bool = True
    input_tokens: int = 0
    output_tokens: int = 0


class WireFormat(Protocol):
    """What a provider translates for the tool loop."""

    name: str

    def opening_messages(self, request: GenerationRequest, user_turn: str) -> list[dict[str, Any]]:
        """Return the first request's messages: history and the user turn (plus the system prompt if in-band)."""
        ...

    def stream_turn(self, turn: TurnRequest) -> Generator[TextDelta, None, ModelTurn]:
        """Stream one model call, yielding text deltas; return the turn; raise ProviderError on failure."""
        ...

    def tool_result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        """Return the messages that hand one turn's tool results back to the model."""
        ...


def run_tool_loop(wire: WireFormat, request: GenerationRequest) -> Iterator[ProviderEvent]:
    """Yield text deltas and tool activity over at most `max_tool_rounds + 1` model calls, then one Generation."""
    settings = request.settings
    user_turn = request.user_turn or build_user_turn(question=request.question)
    messages = wire.opening_messages(request, user_turn)
    tools = request.toolbox.specs() if request.toolbox else tool_specs()
    call_tool = request.toolbox.run if request.toolbox else run_tool
    tool_calls: list[dict[str, Any]] = []
    round_texts: list[str] = []
    usage = {"input_tokens": 0, "output_tokens": 0}
    stop_reason = ""
    rounds = 0
    for round_number in range(settings.max_tool_rounds + 1):
        rounds = round_number + 1
        last_round = round_number == settings.max_tool_rounds
        turn = yield from wire.stream_turn(
            TurnRequest(request=request, messages=messages, tools=tools, last_round=last_round)
        )
        usage["input_tokens"] += turn.input_tokens
        usage["output_tokens"] += turn.output_tokens
        stop_reason = turn.stop_reason
        round_texts.append(turn.text)
        if not turn.wants_tools or not turn.tool_calls:
            break
        if last_round:
            logger.warning("llm_tool_rounds_exhausted", provider=wire.name, rounds=rounds)
            break
        messages.append(turn.assistant_message)
        results: list[ToolResult] = []
        for call in turn.tool_calls:
            result = call_tool(
                call_id=call.id, name=call.name, arguments=call.arguments, max_results=settings.tool_max_results
            )
            for source in result.sources:
                request.evidence.add(source)
            tool_calls.append({**result.trace(), "round": rounds})
            yield ToolActivity(
                name=result.name, arguments=result.arguments, is_error=result.is_error, sources=len(result.sources)
            )
            results.append(result)
        messages.extend(wire.tool_result_messages(results))
    final_text = round_texts[-1] if round_texts and round_texts[-1].strip() else "\n\n".join(round_texts)
    yield Generation(
        text=final_text.strip(), rounds=rounds, tool_calls=tool_calls, stop_reason=stop_reason, usage=usage
    )
