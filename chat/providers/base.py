"""What every answer provider shares: the request, the streamed events and the error type."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from chat.answer_settings import AnswerSettings
from evidence.concepts import Concept
from evidence.patient import PatientDetails
from evidence.question_parts import QuestionParts
from evidence.sources import EvidenceSet


class Toolbox(Protocol):
    """The tools offered for one request, when they differ from every tool in `chat.tools.TOOLS`."""

    def specs(self) -> list[dict[str, Any]]:
        """Return the tools as name / description / input_schema (an empty list offers none)."""
        ...

    def run(self, *, call_id: str, name: str, arguments: Any, max_results: int) -> Any:
        """Run one call and return a `chat.tools.ToolResult`; never raise for a bad call."""
        ...


@dataclass
class GenerationRequest:
    """Everything a provider needs to write one answer."""

    question: str
    system_prompt: str
    evidence: EvidenceSet
    settings: AnswerSettings
    history: list[dict[str, str]] = field(default_factory=list)
    question_terms: tuple[str, ...] = ()
    term_weights: dict[str, float] = field(default_factory=dict)
    # The question's concepts (condition, decision, population, topic words) with their wordings.
    concepts: tuple[Concept, ...] = ()
    # What the question asks for (`evidence.asks.asked_for`, its shorthand spelled out); None: read from `question`.
    asks: tuple[str, ...] | None = None
    focus: frozenset[str] = frozenset()  # the stems a follow-up adds to the question before it (`follow_up_focus`)
    patient: PatientDetails | None = None  # what the question says of its patient (None: read from `question`)
    parts: QuestionParts | None = None  # what an answer can miss (`question_parts`; None: read here)
    # Research pages send their own user turn and tools; None/"" keep the clinical defaults.
    toolbox: Toolbox | None = None
    user_turn: str = ""


@dataclass(frozen=True)
class TextDelta:
    """A piece of answer text as the model streams it (not yet verified)."""

    text: str


@dataclass(frozen=True)
class ToolActivity:
    """A tool call the model made, reported when it finished."""

    name: str
    arguments: Any
    is_error: bool
    sources: int


@dataclass
class Generation:
    """The provider's final output: the full text and how it was produced."""

    text: str
    rounds: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


ProviderEvent = TextDelta | ToolActivity | Generation


class ProviderError(Exception):
    """The provider could not produce an answer; `code` is stable, `message` is for people."""

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            **({"status": self.status} if self.status else {}),
        }


class Provider(Protocol):
    name: str

    def generate(self, request: GenerationRequest) -> Iterator[ProviderEvent]:
        """Yield text deltas and tool activity, then one `Generation`; raise ProviderError on failure."""
        ...


def status_error(*, provider: str, status: int, detail: str) -> ProviderError:
    """Map an HTTP error status from an LLM service to a ProviderError with a message that says what to do."""
    label = {"anthropic": "Anthropic", "openai": "The OpenAI-compatible server"}.get(provider, provider)
    detail = f": {detail}" if detail else ""
    if status == 529:
        return ProviderError(
            "llm_overloaded", f"{label} is overloaded (HTTP 529){detail}. Try again shortly.", status=status
        )
    if status == 429:
        return ProviderError("llm_rate_limited", f"{label} rate-limited the request (HTTP 429){detail}.", status=status)
    if status in {401, 403}:
        return ProviderError(
            "llm_auth",
            f"{label} refused the credentials (HTTP {status}){detail}. Check the API key.",
            status=status,
        )
    if 400 <= status < 500:
        return ProviderError(
            "llm_bad_request",
            f"{label} rejected the request (HTTP {status}){detail}. Check LLM_MODEL.",
            status=status,
        )
    return ProviderError("llm_server_error", f"{label} failed (HTTP {status}){detail}.", status=status)
