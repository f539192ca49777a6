"""Fake LLM servers for the Evidence Scout: JSON completions over both wire formats, answered by prompt kind.

The scout asks for four kinds of JSON (`scout_expansion`, `scout_disease_name`, `scout_rerank`,
`scout_synthesis`, named by the title of the schema sent with the prompt). A test sets `replies[kind]`
to a JSON object, raw text, an `HttpError`, or a function of the prompt returning one of those.
Anthropic requests get a Messages API body, OpenAI-compatible ones a chat.completion body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.chat.fakes import HttpError

Answer = dict[str, Any] | str | HttpError
KINDS = ("scout_expansion", "scout_disease_name", "scout_rerank", "scout_synthesis")


def record_pmids(prompt: str) -> list[str]:
    """Return the PMIDs of the records a rerank or synthesis prompt carries, in order."""
    return re.findall(r"<record>\s*PMID (\d+)", prompt)


@dataclass
class ScoutLlm:
    server: HTTPServer
    provider: str  # "anthropic" | "openai"
    replies: dict[str, Answer | Callable[[str], Answer]] = field(default_factory=dict)
    prompts: list[tuple[str, str]] = field(default_factory=list)  # (kind, prompt) in arrival order

    def __post_init__(self) -> None:
        path = "/v1/messages" if self.provider == "anthropic" else "/v1/chat/completions"
        self.server.expect_request(path, method="POST").respond_with_handler(self._handle)

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.prompts]

    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data(as_text=True))
        prompt = body["messages"][-1]["content"]
        kind = next((k for k in KINDS if f'"title":"{k}"' in prompt), "unknown")
        self.prompts.append((kind, prompt))
        reply = self.replies.get(kind, HttpError(500, "api_error", f"No reply scripted for {kind}."))
        answer = reply(prompt) if callable(reply) else reply
        if isinstance(answer, HttpError):
            if self.provider == "anthropic":
                detail = {"type": answer.error_type, "message": answer.message}
                error: dict[str, Any] = {"type": "error", "error": detail}
            else:
                error = {"error": {"message": answer.message, "type": answer.error_type, "param": None, "code": None}}
            return Response(json.dumps(error), status=answer.status, content_type="application/json")
        text = answer if isinstance(answer, str) else json.dumps(answer)
        if self.provider == "anthropic":
            message: dict[str, Any] = {
                "id": f"msg_scout_{len(self.prompts)}", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": 300, "output_tokens": 60},
            }
        else:
            message = {
                "id": f"chatcmpl-scout-{len(self.prompts)}", "object": "chat.completion", "created": 1732280000,
                "model": "llama-test",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 60, "total_tokens": 360},
            }
        return Response(json.dumps(message), status=200, content_type="application/json")
