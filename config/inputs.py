"""Checks shared by every edge that takes text or numbers from people: forms, serializers, views, commands."""

from __future__ import annotations

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
