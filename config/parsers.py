"""The API's JSON parser (its own module: DRF resolves DEFAULT_PARSER_CLASSES while importing its views)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import exceptions, parsers
from rest_framework.utils import json as drf_json

from config.inputs import JSON_MAX_DEPTH, json_loads_bounded


class BoundedJSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing documents nested deeper than JSON_MAX_DEPTH with a 400.

    The default parser hands `[` x 100,000 to `json.load`, whose C decoder recurses per bracket and
    raises RecursionError - a 500. No MedCite request body needs more than a few levels.
    """

    def parse(
        self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
            parse_constant = drf_json.strict_constant if self.strict else None
            return json_loads_bounded(text, max_depth=JSON_MAX_DEPTH, parse_constant=parse_constant)
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError alike
            raise exceptions.ParseError(f"JSON parse error - {exc}") from exc

