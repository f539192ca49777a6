"""Parse MEDLINE text (the `PMID- ` tagged format PubMed exports)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from evidence.identifiers import PMCID_RE, is_doi, is_pmid, normalize_doi
from evidence.integrity import MEDLINE_TAGS
from pubmed.parsers.records import (
    AbstractRecord,
    AbstractSection,
    CommentCorrection,
    MeshHeading,
    PubmedParseError,
    parse_pub_date,
    render_abstract,
)

_MEDLINE_LINE = re.compile(r"^([A-Z][A-Z0-9 ]{1,3})-\s?(.*)$")


def _medline_fields(lines: list[str]) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    for line in lines:
        match = _MEDLINE_LINE.match(line)
        if match and not line.startswith("      "):
            fields.append((match.group(1).strip(), match.group(2).strip()))
        elif line.startswith("      ") and fields:
            tag, value = fields[-1]
            fields[-1] = (tag, f"{value} {line.strip()}".strip())
        elif line.strip():
            raise PubmedParseError(f"Unexpected line in MEDLINE text: {line[:80]!r}")
    return fields


_SECTION_LABEL = re.compile(r"(?:(?<=^)|(?<=[.?!)\]] ))([A-Z][A-Z ,/&-]{2,40}[A-Z]): ")


def medline_sections(abstract: str) -> list[AbstractSection]:
    """Split a MEDLINE AB field at its upper-case 'LABEL: ' markers into labelled sections."""
    if not abstract:
        return []
    marks = list(_SECTION_LABEL.finditer(abstract))
    if not marks or marks[0].start() != 0:
        return [AbstractSection(label="", text=abstract)]
    sections = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(abstract)
        sections.append(AbstractSection(label=mark.group(1), text=abstract[mark.end():end].strip()))
    return sections


def _medline_record(fields: list[tuple[str, str]]) -> AbstractRecord:
    values: dict[str, list[str]] = {}
    for tag, value in fields:
        values.setdefault(tag, []).append(value)
    pmid = (values.get("PMID") or [""])[0]
    if not is_pmid(pmid):
        raise PubmedParseError(f"A MEDLINE record has no valid PMID (found {pmid!r}).")
    # AU and CN appear in author order; keep that order.
    authors = [value for tag, value in fields if tag in {"AU", "CN"}]
    headings = []
    for value in values.get("MH", []):
        descriptor, *qualifiers = value.split("/")
        major = descriptor.startswith("*") or any(q.startswith("*") for q in qualifiers)
        headings.append(
            MeshHeading(
                descriptor=descriptor.lstrip("*").strip(),
                major=major,
                qualifiers=tuple(q.lstrip("*").strip() for q in qualifiers),
            )
        )
    doi = ""
    for value in values.get("LID", []) + values.get("AID", []):
        if value.endswith("[doi]"):
            candidate = normalize_doi(value.removesuffix("[doi]").strip())
            if is_doi(candidate):
                doi = candidate
                break
    pmcid = next((v for v in values.get("PMC", []) if PMCID_RE.fullmatch(v)), "")
    corrections = [
        _medline_correction(MEDLINE_TAGS[tag], value) for tag, value in fields if tag in MEDLINE_TAGS
    ]
    raw_date = (values.get("DP") or [""])[0]
    parsed, year = parse_pub_date(raw_date)
    abstract_text = " ".join(values.get("AB", []))
    sections = medline_sections(abstract_text)
    return AbstractRecord(
        pmid=pmid,
        title=" ".join(values.get("TI", [])),
        abstract=render_abstract(sections),
        sections=sections,
        authors=authors,
        journal=(values.get("TA") or [""])[0],
        journal_title=(values.get("JT") or [""])[0],
        pub_date=parsed,
        pub_date_raw=raw_date,
        year=year,
        mesh_terms=[heading.descriptor for heading in headings],
        mesh_headings=headings,
        publication_types=values.get("PT", []),
        keywords=values.get("OT", []),
        doi=doi,
        pmcid=pmcid,
        is_book="GR" in values and "BTI" in values,
        corrections=corrections,
    )


_MEDLINE_LINK_PMID = re.compile(r"\s*PMID:\s*(\d+)\s*$")


def _medline_correction(kind: str, value: str) -> CommentCorrection:
    """Return a MEDLINE link line ("Lancet. 2010 Feb 6;375(9713):445. PMID: 20137807") as a correction link."""
    match = _MEDLINE_LINK_PMID.search(value)
    source = value[: match.start()].strip() if match else value.strip()
    return CommentCorrection(type=kind, pmid=match.group(1) if match else "", source=source)


def medline_blocks(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, list[str]]]:
    """Group numbered MEDLINE lines into records (separated by blank lines): (first line number, lines)."""
    block: list[str] = []
    first = 0
    for number, line in lines:
        if line.strip():
            if not block:
                first = number
            block.append(line.rstrip("\r"))
        elif block:
            yield first, block
            block = []
    if block:
        yield first, block


def medline_record(lines: list[str]) -> AbstractRecord:
    """Parse the lines of one MEDLINE record."""
    return _medline_record(_medline_fields(lines))


def parse_medline(text: str) -> list[AbstractRecord]:
    """Parse MEDLINE-format text (efetch rettype=medline) into records."""
    records = [medline_record(block) for _, block in medline_blocks(enumerate(text.splitlines(), start=1))]
    if not records:
        raise PubmedParseError("No MEDLINE records found (each record starts with a 'PMID- ' line).")
    return records
