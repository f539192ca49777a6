"""Parsers for PubMed records: efetch XML (PubmedArticleSet), MEDLINE text and JSONL, and files of any of them.

One module per format; each returns the same `AbstractRecord`s (`records.py`). `files.py` streams whole
files, plain or gzip-compressed, however large.
"""

from __future__ import annotations

from pubmed.parsers.files import FORMATS, RecordFile, detect_format, parse_file
from pubmed.parsers.jsonl import parse_jsonl, parse_jsonl_line
from pubmed.parsers.medline import parse_medline
from pubmed.parsers.pubmed_xml import iter_pubmed_xml, ncbi_xml_errors, parse_pubmed_xml, parse_xml_safely
from pubmed.parsers.records import (
    AbstractRecord,
    AbstractSection,
    CommentCorrection,
    MeshHeading,
    PubmedParseError,
    RecordEntry,
    parse_pub_date,
    render_abstract,
)

__all__ = [
    "FORMATS",
    "AbstractRecord",
    "AbstractSection",
    "CommentCorrection",
    "MeshHeading",
    "PubmedParseError",
    "RecordEntry",
    "RecordFile",
    "detect_format",
    "iter_pubmed_xml",
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
