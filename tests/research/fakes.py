"""A fake Anthropic Messages API for the research pages: streamed tray replies and per-row AI-column answers.

Streaming requests (`"stream": true`, the tray) take the next step of a script, as
`tests.chat.fakes.FakeAnthropic` serves them. Non-streaming requests (an AI column judging one
row) are answered by `judge(prompt)`, which sees the row's record in the prompt and returns the
JSON reply, a raw text reply, or an `HttpError`; it may block on an event to pace a test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.chat.fakes import FakeAnthropic, HttpError

Judgement = dict[str, Any] | str | HttpError


def record_id(prompt: str) -> str:
    """Return the PMID or NCT number of the record an AI-column prompt carries."""
    match = re.search(r"<record>\s*(?:PMID (\d+)|ClinicalTrials\.gov (NCT\d{8}))", prompt)
    if not match:
        raise AssertionError(f"no record in the prompt: {prompt[:200]!r}")
    return match.group(1) or match.group(2)


class FakeResearchAnthropic(FakeAnthropic):
    def __init__(self, server: HTTPServer, judge: Callable[[str], Judgement] | None = None) -> None:
        self.judge = judge or (lambda prompt: HttpError(500, "api_error", "No judge set for this test."))
        self.row_requests: list[dict[str, Any]] = []
        super().__init__(server)

    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data(as_text=True))
        if body.get("stream"):
            return super()._handle(request)
        self.row_requests.append(body)
        outcome = self.judge(body["messages"][-1]["content"])
        if isinstance(outcome, HttpError):
            return self._http_error(outcome)
        text = outcome if isinstance(outcome, str) else json.dumps(outcome)
        message = {
            "id": f"msg_row_{len(self.row_requests)}",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 200, "output_tokens": 30},
        }
        return Response(json.dumps(message), status=200, content_type="application/json")
