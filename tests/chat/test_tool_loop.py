"""The shared tool loop, driven by a scripted wire format and a toolbox that records its calls."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from chat.answer_settings import AnswerSettings
from chat.providers.base import Generation, GenerationRequest, TextDelta, ToolActivity
from chat.providers.tool_loop import ModelTurn, ToolCall, TurnRequest, run_tool_loop
from chat.tools import ToolResult
from evidence.sources import ORIGIN_TOOL, EvidenceSet, EvidenceSource


class ScriptedWire:
    """Replay one ModelTurn per round and record what the loop sent."""

    name = "scripted"

    def __init__(self, turns: list[ModelTurn]) -> None:
        self.turns = turns
        self.calls: list[dict[str, Any]] = []

    def opening_messages(self, request: GenerationRequest, user_turn: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": user_turn}]

    def stream_turn(self, turn: TurnRequest) -> Generator[TextDelta, None, ModelTurn]:
        self.calls.append(
            {"messages": list(turn.messages), "tools": [t["name"] for t in turn.tools], "last_round": turn.last_round}
        )
        scripted = self.turns[len(self.calls) - 1]
        if scripted.text:
            yield TextDelta(scripted.text)
        return scripted

    def tool_result_messages(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [{"role": "tool", "id": result.call_id, "content": result.content} for result in results]


class EchoToolbox:
    """One tool, `echo`, whose result carries one PubMed source."""

    def specs(self) -> list[dict[str, Any]]:
        return [{"name": "echo", "description": "Echo.", "input_schema": {"type": "object"}}]

    def run(self, *, call_id: str, name: str, arguments: Any, max_results: int) -> ToolResult:
        source = EvidenceSource(
            doc_id=f"pmid:{call_id[-1]}", chunk_id="summary", origin=ORIGIN_TOOL, text="t", pmid=call_id[-1]
        )
        return ToolResult(
            call_id=call_id,
            name=name,
            arguments=arguments,
            content=f"echo {arguments}",
            sources=[source],
            is_error=False,
            duration_ms=0,
        )


def tool_turn(*call_ids: str, tokens: int = 1) -> ModelTurn:
    calls = [ToolCall(id=call_id, name="echo", arguments={"n": call_id}) for call_id in call_ids]
    return ModelTurn(
        text="",
        stop_reason="tool_use",
        assistant_message={"role": "assistant", "calls": call_ids},
        tool_calls=calls,
        input_tokens=tokens,
        output_tokens=tokens,
    )


def request(max_tool_rounds: int) -> GenerationRequest:
    return GenerationRequest(
        question="Q?",
        system_prompt="S",
        evidence=EvidenceSet(),
        settings=AnswerSettings(max_tool_rounds=max_tool_rounds),
        toolbox=EchoToolbox(),
        user_turn="Question: Q?",
    )


def test_tool_results_go_back_and_the_final_turn_is_the_answer() -> None:
    wire = ScriptedWire(
        [
            tool_turn("call_1", "call_2", tokens=3),
            ModelTurn(
                text="Answer [citation:pmid:1:summary].",
                stop_reason="end_turn",
                assistant_message={},
                input_tokens=5,
                output_tokens=7,
            ),
        ]
    )
    generation_request = request(max_tool_rounds=2)
    events = list(run_tool_loop(wire, generation_request))

    assert [type(event) for event in events] == [ToolActivity, ToolActivity, TextDelta, Generation]
    final = events[-1]
    assert isinstance(final, Generation)
    assert (final.text, final.rounds, final.stop_reason) == ("Answer [citation:pmid:1:summary].", 2, "end_turn")
    assert final.usage == {"input_tokens": 8, "output_tokens": 10}
    assert [(call["id"], call["round"]) for call in final.tool_calls] == [("call_1", 1), ("call_2", 1)]
    assert wire.calls[1]["messages"] == [
        {"role": "user", "content": "Question: Q?"},
        {"role": "assistant", "calls": ("call_1", "call_2")},
        {"role": "tool", "id": "call_1", "content": "echo {'n': 'call_1'}"},
        {"role": "tool", "id": "call_2", "content": "echo {'n': 'call_2'}"},
    ]
    assert [source.doc_id for source in generation_request.evidence] == ["pmid:1", "pmid:2"]


def test_rounds_are_bounded_and_only_the_last_round_forbids_tools() -> None:
    wire = ScriptedWire([tool_turn("call_1"), tool_turn("call_2"), tool_turn("call_3")])
    events = list(run_tool_loop(wire, request(max_tool_rounds=2)))

    assert [call["last_round"] for call in wire.calls] == [False, False, True]
    assert all(call["tools"] == ["echo"] for call in wire.calls)
    final = events[-1]
    assert isinstance(final, Generation)
    assert final.rounds == 3
    assert [call["id"] for call in final.tool_calls] == ["call_1", "call_2"]  # the last round's calls never run


def test_calls_in_a_turn_that_did_not_stop_for_tools_are_not_run() -> None:
    truncated = ModelTurn(
        text="Partial",
        stop_reason="max_tokens",
        assistant_message={},
        tool_calls=[ToolCall(id="call_1", name="echo", arguments="{")],
        wants_tools=False,
    )
    events = list(run_tool_loop(ScriptedWire([truncated]), request(max_tool_rounds=3)))

    assert [type(event) for event in events] == [TextDelta, Generation]
    final = events[-1]
    assert isinstance(final, Generation)
    assert (final.text, final.tool_calls, final.stop_reason) == ("Partial", [], "max_tokens")


def test_an_empty_last_turn_falls_back_to_the_text_of_every_round() -> None:
    first = ModelTurn(
        text="Looking this up.",
        stop_reason="tool_use",
        assistant_message={},
        tool_calls=[ToolCall(id="call_1", name="echo", arguments={})],
    )
    empty = ModelTurn(text="  ", stop_reason="end_turn", assistant_message={})
    final = list(run_tool_loop(ScriptedWire([first, empty]), request(max_tool_rounds=1)))[-1]

    assert isinstance(final, Generation)
    assert final.text == "Looking this up."
