"""Parse a model's reply that should be one JSON object — defensively, never with a bare json.loads."""

from __future__ import annotations

import json
import re
from typing import Any

from chat.providers.base import ProviderError

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)

JSON_SYSTEM_PROMPT = (
    "You are a careful clinical information extractor. Reply with exactly one JSON object that matches the "
    "schema you are given: no prose, no Markdown, no code fences."
)


def json_request_prompt(prompt: str, schema: dict[str, Any]) -> str:
    """Return the user turn asking for JSON matching `schema`."""
    return f"{prompt}\n\nJSON schema of the reply:\n{json.dumps(schema, separators=(',', ':'))}"


def parse_json_object(text: str, *, provider: str) -> dict[str, Any]:
    """Return the first JSON object in `text` (a fenced block or the outermost braces), or raise ProviderError."""
    candidates = [match.group(1) for match in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ProviderError(
        "llm_malformed_output", f"The {provider} model was asked for a JSON object but replied: {text[:120]!r}."
    )
