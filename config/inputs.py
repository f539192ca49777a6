"""Checks shared by every edge that takes text or numbers from people: forms, serializers, views, commands."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError


def check_no_nul(value: str, *, field: str) -> str:
    """Return `value`, or raise ValidationError when it holds a NUL character, which PostgreSQL cannot store."""
    if "\x00" in value:
        raise ValidationError(
            f"{field} contains a NUL character (\\x00), which MedCite cannot store or search; remove it.",
            code="null_characters_not_allowed",
        )
    return value


def parse_ascii_int(value: str) -> int | None:
    """Return `value` as an integer when it is ASCII digits only, else None.

    `str.isdigit()` is also true for superscripts and other scripts' digits ("²", "٣"), which
    `int()` then rejects or reads unexpectedly; ids and years in URLs are plain 0-9.
    """
    text = value.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    return None


_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")


def ascii_integer_message(value: object) -> str | None:
    """Return why `value` is not a whole number written in ASCII digits, or None when it is (or is not text).

    `int()` reads Arabic-Indic, full-width and other scripts' digits (U+0661, U+FF11...) and "1_000";
    a curator typing or pasting one of those should be told, not have a different number stored.
    """
    if not isinstance(value, str) or not value.strip() or _ASCII_INTEGER.fullmatch(value.strip()):
        return None
    return f"Enter a whole number in the digits 0-9, e.g. 2019; got {value.strip()!r}."


class AsciiIntegerFormField(forms.IntegerField):
    """An IntegerField that accepts only the digits 0-9 (with an optional sign)."""

    def to_python(self, value: Any) -> int | None:
        message = ascii_integer_message(value)
        if message:
            raise ValidationError(message, code="invalid")
        return super().to_python(value)


JSON_MAX_DEPTH = 64
# A string literal (escapes included), or one bracket: what the depth scan looks at.
_JSON_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def json_depth_exceeds(text: str, *, max_depth: int = JSON_MAX_DEPTH) -> int | None:
    """Return the position where `text` nests arrays/objects deeper than `max_depth`, or None.

    Brackets inside string literals do not count. The scan stops at the first bracket past the
    limit, so `"[" * 100_000` costs `max_depth` steps, not a recursion per bracket as `json.loads` does.
    """
    depth = 0
    for match in _JSON_STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                return match.start()
        elif token in "]}":
            depth -= 1
    return None


def json_loads_bounded(text: str | bytes, *, max_depth: int = JSON_MAX_DEPTH, **kwargs: Any) -> Any:
    """Parse JSON like `json.loads`, refusing documents nested deeper than `max_depth`.

    Raises json.JSONDecodeError (a ValueError) for both malformed and too-deep input, so callers keep
    one `except`; a deep document would otherwise raise RecursionError from the C parser, which no
    caller expects and which surfaces as a server error.
    """
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    position = json_depth_exceeds(text, max_depth=max_depth)
    if position is not None:
        raise json.JSONDecodeError(
            f"arrays and objects nested deeper than {max_depth} levels; MedCite reads no document that deep", text,
            position,
        )
    return json.loads(text, **kwargs)
