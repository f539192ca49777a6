"""Parsers for PubMed records: efetch XML (PubmedArticleSet), MEDLINE text and JSONL, and files of any of them.

One module per format; each returns the same `AbstractRecord`s (`records.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from pubmed.parsers.jsonl import parse_jsonl, parse_jsonl_line
from pubmed.parsers.medline import parse_medline
from pubmed.parsers.pubmed_xml import ncbi_xml_errors, parse_pubmed_xml, parse_xml_safely
from pubmed.parsers.records import (
    AbstractRecord,
    AbstractSection,
    CommentCorrection,
    MeshHeading,
    PubmedParseError,
    parse_pub_date,
    render_abstract,
)

__all__ = [
    "AbstractRecord",
    "AbstractSection",
    "CommentCorrection",
    "MeshHeading",
    "PubmedParseError",
    "detect_format",
    "iter_records",
    "ncbi_xml_errors",
    "parse_file",
    "parse_jsonl",
    "parse_jsonl_line",
    "parse_medline",
    "parse_pub_date",
    "parse_pubmed_xml",
    "parse_xml_safely",
    "render_abstract",
]



def detect_format(path: Path, head: bytes) -> str:
    """Return 'xml', 'medline' or 'jsonl' for a file, from its first bytes (extension as tiebreak)."""
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped.startswith(b"<"):
        return "xml"
    if stripped.startswith(b"{"):
        return "jsonl"
    if stripped.startswith(b"PMID-"):
        return "medline"
    suffix = path.suffix.lower()
    if suffix in {".xml"}:
        return "xml"
    if suffix in {".jsonl", ".ndjson", ".json"}:
        return "jsonl"
    if suffix in {".txt", ".medline", ".nbib"}:
        return "medline"
    raise PubmedParseError(
        f"{path}: cannot tell the format; expected PubMed XML (<PubmedArticleSet>), MEDLINE text "
        "('PMID- ' lines) or JSONL ({\"pmid\": ...} per line)."
    )


def parse_file(path: Path) -> list[AbstractRecord]:
    """Parse a PubMed XML, MEDLINE text or JSONL file, naming the file in any error."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PubmedParseError(f"{path}: cannot read ({exc.strerror}).") from exc
    kind = detect_format(path, data[:64])
    try:
        if kind == "xml":
            return parse_pubmed_xml(data)
        text = data.decode("utf-8-sig")
        return parse_medline(text) if kind == "medline" else parse_jsonl(text)
    except UnicodeDecodeError as exc:
        raise PubmedParseError(f"{path}: not UTF-8 text ({exc.reason}).") from exc
    except PubmedParseError as exc:
        raise PubmedParseError(f"{path}: {exc}") from exc


def iter_records(paths: Iterable[Path]) -> Iterator[tuple[Path, list[AbstractRecord]]]:
    for path in paths:
        yield path, parse_file(path)
