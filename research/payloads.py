"""Find payloads in model output, validate them, and take them out of the prose.

A payload is a parse marker (`PUBMED_QUERY_SUGGESTION:`) followed by one JSON object, written
anywhere in the reply, also inside a Markdown code fence (before or after the marker). Each is
normalised (enum spellings such as "Phase 3" or "Recruiting"), validated against its type's JSON
schema, and kept or dropped with a logged reason. Either way the marker, the JSON and the fence
around it leave the prose, so the reader never sees raw payload text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import structlog

from research.registries import PayloadType
from trials.constants import SEARCHABLE_STATUSES, phase_code

logger = structlog.get_logger(__name__)

EXCERPT_CHARS = 120
_FENCE_OPEN_AFTER = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?")
_FENCE_OPEN_BEFORE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n[ \t]*$")
_FENCE_CLOSE = re.compile(r"[ \t]*\n?[ \t]*```[ \t]*")
_DECODER = json.JSONDecoder()


class PayloadInvalid(ValueError):
    """The payload's data does not match its type; `str(exc)` says where and why."""


@dataclass(frozen=True)
class ParsedPayload:
    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class DroppedPayload:
    type: str
    reason: str
    excerpt: str


@dataclass
class PayloadParse:
    """Prose with every payload removed, the valid payloads in order, and what was dropped and why."""

    prose: str
    payloads: list[ParsedPayload] = field(default_factory=list)
    dropped: list[DroppedPayload] = field(default_factory=list)


# --- Normalisation -------------------------------------------------------------------------------


def normalize_phase(value: str) -> str:
    """Return the ClinicalTrials.gov phase for "Phase 3", "phase III", "PHASE_2", "early phase 1", "N/A"."""
    compact = re.sub(r"[\s_\-/]+", "", value.strip().upper())
    if compact in {"NA", "N/A", "NOTAPPLICABLE"}:
        return "NA"
    early = compact.startswith("EARLY")
    compact = compact.removeprefix("EARLY")
    match = re.fullmatch(r"(?:PHASE|PH)?(IV|III|II|I|[0-4])", compact)
    if not match:
        return value
    return phase_code(match.group(1), early=early) or value


def normalize_status(value: str) -> str:
    """Return the overallStatus value for "Recruiting", "active, not recruiting", "not-yet-recruiting"."""
    status = re.sub(r"[\s,\-]+", "_", value.strip().upper()).strip("_")
    return status if status in SEARCHABLE_STATUSES else value


def _split_phases(value: Any) -> list[Any]:
    """Return a list from a phase value the model wrote as a list or as "Phase 2/3" / "PHASE2, PHASE3"."""
    items = value if isinstance(value, list) else [value]
    phases: list[Any] = []
    for item in items:
        if not isinstance(item, str):
            phases.append(item)
            continue
        parts = [part for part in re.split(r"\s*[,/|&]\s*|\s+and\s+", item.strip()) if part]
        if not parts:  # nothing but separators: keep it, so validation reports it
            phases.append(item)
        # "Phase 2/3" splits into "Phase 2" and "3": the bare number inherits the prefix.
        for part in parts:
            phases.append(f"PHASE{part}" if part.isdigit() else part)
    return phases


def normalize_phases(value: Any) -> list[Any]:
    """Return the phase list of a payload value: split ("Phase 2/3"), normalised, without repeats."""
    return list(
        dict.fromkeys(normalize_phase(item) if isinstance(item, str) else item for item in _split_phases(value))
    )


def _normalize(payload_type: PayloadType, data: dict[str, Any]) -> dict[str, Any]:
    cleaned = {key: value.strip() if isinstance(value, str) else value for key, value in data.items()}
    cleaned = {key: value for key, value in cleaned.items() if value is not None}
    if payload_type.name == "trial_search_suggestion":
        if "phase" in cleaned:
            cleaned["phase"] = normalize_phases(cleaned["phase"])
        if "status" in cleaned:
            statuses = cleaned["status"] if isinstance(cleaned["status"], list) else [cleaned["status"]]
            cleaned["status"] = list(
                dict.fromkeys(normalize_status(item) if isinstance(item, str) else item for item in statuses)
            )
        cleaned = {key: value for key, value in cleaned.items() if value not in ("", [])}
    elif payload_type.name == "ai_column_suggestion" and isinstance(cleaned.get("type"), str):
        kind = cleaned["type"].lower()
        cleaned["type"] = "boolean" if kind in {"bool", "yes/no", "yes_no", "yesno", "boolean"} else kind
    return cleaned


def check_payload(payload_type: PayloadType, data: Any) -> dict[str, Any]:
    """Return `data` normalised and valid for `payload_type`, or raise PayloadInvalid saying what is wrong."""
    if not isinstance(data, dict):
        raise PayloadInvalid(f"the JSON after the marker is a {type(data).__name__}, not an object")
    cleaned = _normalize(payload_type, data)
    errors = sorted(
        jsonschema.Draft202012Validator(payload_type.schema).iter_errors(cleaned),
        key=lambda error: (list(error.absolute_path), error.message),
    )
    if errors:
        error = jsonschema.exceptions.best_match(errors) or errors[0]
        where = ".".join(str(part) for part in error.absolute_path)
        if error.validator == "anyOf" and not where:
            raise PayloadInvalid(
                "it sets none of the search fields (condition, intervention, term, sponsor, phase, status)"
            )
        raise PayloadInvalid(f"{where + ': ' if where else ''}{error.message}")
    return cleaned


# --- Parsing -------------------------------------------------------------------------------------


def _balanced_end(text: str, start: int) -> int | None:
    """Return the index after the brace closing the one at `start` (strings respected), or None."""
    depth = 0
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


@dataclass
class _Found:
    start: int
    end: int
    payload_type: PayloadType
    value: Any = None
    error: str = ""


def _read_payload(text: str, match: re.Match[str], payload_type: PayloadType) -> _Found:
    start, position = match.start(), _skip_space(text, match.end())
    fenced_after = _FENCE_OPEN_AFTER.match(text, position)
    if fenced_after:
        position = _skip_space(text, fenced_after.end())
    found = _Found(start=start, end=match.end(), payload_type=payload_type)
    if position < len(text) and text[position] == "{":
        try:
            found.value, found.end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            found.error = f"the JSON after the marker is not valid ({exc.msg} at character {exc.pos - position})"
            closing = _balanced_end(text, position)
            if closing is not None:
                found.end = closing
            else:
                fence_close = text.find("```", position) if fenced_after else -1
                line_end = text.find("\n\n", position)
                found.end = fence_close if fence_close != -1 else (line_end if line_end != -1 else len(text))
    else:
        found.error = "no JSON object follows the marker"
        found.end = fenced_after.end() if fenced_after else match.end()
    # A fence around the marker (```json\nMARKER {...}\n```) or after it (MARKER\n```json\n{...}\n```).
    closer = _FENCE_CLOSE.match(text, found.end)
    opener = _FENCE_OPEN_BEFORE.search(text, 0, start)
    if fenced_after and closer:
        found.end = closer.end()
    elif not fenced_after and opener and closer:
        found.start, found.end = opener.start(), closer.end()
    return found


def _marker_pattern(types: Sequence[PayloadType]) -> re.Pattern[str] | None:
    markers = sorted({payload_type.marker for payload_type in types if payload_type.marker}, key=len, reverse=True)
    if not markers:
        return None
    # Models sometimes bold the marker (**MARKER:**) or drop the colon; both still count.
    names = "|".join(re.escape(marker.rstrip(":")) for marker in markers)
    return re.compile(rf"(?:\*\*)?(?P<name>{names})(?:\*\*)?[ \t]*:?(?:\*\*)?", re.IGNORECASE)


def tidy_prose(text: str) -> str:
    """Return text with trailing spaces and runs of blank lines left by removed payloads tidied."""
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def parse_payloads(text: str, *, types: Iterable[PayloadType]) -> PayloadParse:
    """Return the prose of `text` without payload markers, and the payloads of `types` found in it."""
    types = [payload_type for payload_type in types if payload_type.marker]
    by_marker = {payload_type.marker.rstrip(":").upper(): payload_type for payload_type in types}
    pattern = _marker_pattern(types)
    text = text or ""
    if pattern is None:
        return PayloadParse(prose=tidy_prose(text))
    result = PayloadParse(prose="")
    pieces: list[str] = []
    cursor = 0
    for match in pattern.finditer(text):
        if match.start() < cursor:
            continue
        payload_type = by_marker[match.group("name").upper()]
        found = _read_payload(text, match, payload_type)
        if found.start < cursor:
            found.start = cursor
        pieces.append(text[cursor : found.start])
        cursor = found.end
        excerpt = " ".join(text[found.start : found.end].split())[:EXCERPT_CHARS]
        reason = found.error
        if not reason:
            try:
                result.payloads.append(ParsedPayload(payload_type.name, check_payload(payload_type, found.value)))
                continue
            except PayloadInvalid as exc:
                reason = str(exc)
        result.dropped.append(DroppedPayload(payload_type.name, reason, excerpt))
        logger.warning("payload_dropped", payload_type=payload_type.name, reason=reason, excerpt=excerpt)
    pieces.append(text[cursor:])
    result.prose = tidy_prose("".join(pieces))
    return result


def payload_preview_cut(text: str, *, types: Iterable[PayloadType]) -> int:
    """Return how much of streamed `text` may be shown before a (possibly unfinished) payload starts.

    Everything from the first marker, from a code fence, or from a trailing fragment that could be
    the start of a marker is held back; the stored answer replaces the preview anyway.
    """
    markers = [payload_type.marker.rstrip(":").upper() for payload_type in types if payload_type.marker]
    upper = text.upper()
    cut = len(text)
    for marker in markers:
        index = upper.find(marker)
        if index != -1:
            cut = min(cut, index)
    fence = text.find("```")
    if fence != -1:
        cut = min(cut, fence)
    tail_start = max(0, cut - max((len(marker) for marker in markers), default=0))
    for position in range(tail_start, cut):
        fragment = upper[position:cut].lstrip("*")
        starts_marker = fragment and not fragment[0].isspace() and any(m.startswith(fragment) for m in markers)
        if starts_marker and (position == 0 or not upper[position - 1].isalnum()):
            return position
    if cut == len(text) and text.endswith(("`", "``")):
        return len(text.rstrip("`"))
    return cut
