"""Parse JSONL: one object per line with `pmid, title, abstract[, authors, journal, pub_date, mesh_terms]`."""

from __future__ import annotations

import json
import re

from evidence.identifiers import is_pmid
from pubmed.parsers.medline import medline_sections
from pubmed.parsers.records import AbstractRecord, MeshHeading, PubmedParseError, clean_text, parse_pub_date

_JSONL_KEYS = {"pmid", "title", "abstract", "authors", "journal", "pub_date", "mesh_terms"}


def _string_list(value: object, *, line_number: int, key: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in re.split(r"[;|]", value) if part.strip()]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return [item.strip() for item in value if item.strip()]
    raise PubmedParseError(f"Line {line_number}: {key!r} must be a list of strings or a ';'-separated string.")


def _reject_nul(obj: dict[str, object], *, line_number: int) -> None:
    """Raise PubmedParseError naming the first key whose text holds a NUL character (PostgreSQL cannot store it)."""
    for key, value in obj.items():
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(text, str) and "\x00" in text for text in texts):
            raise PubmedParseError(
                f"Line {line_number}: {key!r} contains a NUL character (\\u0000), which cannot be stored; remove it."
            )


def parse_jsonl_line(line: str, *, line_number: int) -> AbstractRecord:
    """Parse one JSONL object with pmid, title, abstract[, authors, journal, pub_date, mesh_terms]."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise PubmedParseError(f"Line {line_number}: not valid JSON ({exc.msg}).") from exc
    if not isinstance(obj, dict):
        raise PubmedParseError(f"Line {line_number}: expected a JSON object.")
    _reject_nul(obj, line_number=line_number)
    missing = [key for key in ("pmid", "title", "abstract") if key not in obj]
    if missing:
        raise PubmedParseError(f"Line {line_number}: missing required key(s) {', '.join(missing)}.")
    unknown = sorted(set(obj) - _JSONL_KEYS)
    if unknown:
        raise PubmedParseError(
            f"Line {line_number}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_JSONL_KEYS))}."
        )
    pmid = str(obj["pmid"]).strip()
    if not is_pmid(pmid):
        raise PubmedParseError(f"Line {line_number}: {pmid!r} is not a PMID (digits only, no leading zero).")
    for key in ("title", "abstract", "journal", "pub_date"):
        if key in obj and obj[key] is not None and not isinstance(obj[key], str | int):
            raise PubmedParseError(f"Line {line_number}: {key!r} must be a string.")
    abstract = str(obj["abstract"] or "").strip()
    raw_date = str(obj.get("pub_date") or "").strip()
    parsed, year = parse_pub_date(raw_date)
    mesh = _string_list(obj.get("mesh_terms"), line_number=line_number, key="mesh_terms")
    return AbstractRecord(
        pmid=pmid,
        title=clean_text(str(obj["title"] or "")),
        abstract=abstract,
        sections=medline_sections(clean_text(abstract)) if abstract else [],
        authors=_string_list(obj.get("authors"), line_number=line_number, key="authors"),
        journal=clean_text(str(obj.get("journal") or "")),
        pub_date=parsed,
        pub_date_raw=raw_date,
        year=year,
        mesh_terms=mesh,
        mesh_headings=[MeshHeading(descriptor=term) for term in mesh],
    )


def parse_jsonl(text: str) -> list[AbstractRecord]:
    """Parse JSON Lines, one abstract per line; blank lines are skipped."""
    records = [
        parse_jsonl_line(line, line_number=number)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]
    if not records:
        raise PubmedParseError("The JSONL input has no records.")
    return records
