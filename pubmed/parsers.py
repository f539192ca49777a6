"""Parsers for PubMed records: efetch XML (PubmedArticleSet), MEDLINE text, and JSONL.

XML is parsed with lxml configured so that no entity is expanded, no DTD or other network
resource is loaded and no oversized tree is built; documents that declare entities are refused
outright, which rules out both XXE and "billion laughs" expansion.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from lxml import etree

from evidence.identifiers import PMCID_RE, is_doi, is_pmid, normalize_doi


class PubmedParseError(ValueError):
    """The input is not a well-formed, safe PubMed record set."""


@dataclass(frozen=True)
class AbstractSection:
    """One labelled part of a structured abstract (label is '' for an unstructured abstract)."""

    label: str
    text: str
    category: str = ""


@dataclass(frozen=True)
class MeshHeading:
    """A MeSH descriptor with its qualifiers; `major` when the descriptor or any qualifier is major."""

    descriptor: str
    major: bool = False
    qualifiers: tuple[str, ...] = ()


@dataclass(frozen=True)
class AbstractRecord:
    """A PubMed record as MedCite stores it, independent of the format it came in."""

    pmid: str
    title: str
    abstract: str = ""
    sections: list[AbstractSection] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    journal: str = ""
    journal_title: str = ""
    pub_date: date | None = None
    pub_date_raw: str = ""
    year: int | None = None
    mesh_terms: list[str] = field(default_factory=list)
    mesh_headings: list[MeshHeading] = field(default_factory=list)
    publication_types: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    doi: str = ""
    pmcid: str = ""
    is_book: bool = False

    @property
    def mesh_major(self) -> list[str]:
        return [heading.descriptor for heading in self.mesh_headings if heading.major]


_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name}
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_WS = re.compile(r"\s+")


def _clean(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _month_number(token: str) -> int | None:
    token = token.strip().lower()
    if token.isdecimal() and 1 <= int(token) <= 12:
        return int(token)
    return _MONTHS.get(token[:3]) or _SEASONS.get(token)


def parse_pub_date(raw: str) -> tuple[date | None, int | None]:
    """Return (first day the raw PubMed date denotes, year) for strings like '2021 Sep 15'.

    Handles '2021', '2021 Sep', '2021 Sep 15', MedlineDate ranges ('1998 Dec-1999 Jan',
    '2000 Spring'), ISO dates ('2021-09-15') and slashes ('2021/09/15'). The date is None when no
    year can be found; a missing month or day means the first of the month/year.
    """
    raw = _clean(raw)
    found = re.search(r"(1[6-9]\d\d|2\d\d\d)", raw)
    if not found:
        return None, None
    year = int(found.group(1))
    rest = raw[found.end():].lstrip(" -/")
    parts = re.split(r"[\s/\-]+", rest) if rest else []
    month = _month_number(parts[0]) if parts else None
    day = None
    if month and len(parts) > 1 and parts[1].isdecimal():
        day = int(parts[1])
        if not 1 <= day <= calendar.monthrange(year, month)[1]:
            day = None
    return date(year, month or 1, day or 1), year


# --- XML -------------------------------------------------------------------------------------

_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)


def _xml_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse_xml_safely(data: bytes | str) -> etree._Element:
    """Parse untrusted XML into an element tree, refusing entity declarations and malformed input."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if _ENTITY_DECL.search(data):
        raise PubmedParseError(
            "XML that declares entities (<!ENTITY ...>) is refused: it could read local files or expand "
            "without bound. PubMed never sends entity declarations."
        )
    if not data.strip():
        raise PubmedParseError("The XML document is empty.")
    try:
        root = etree.fromstring(data, parser=_xml_parser())
    except etree.XMLSyntaxError as exc:
        raise PubmedParseError(f"Malformed XML: {exc}") from exc
    if root is None:
        raise PubmedParseError("The XML document has no root element.")
    return root


def _text(element: etree._Element | None) -> str:
    """Return the element's text with inline markup (<i>, <sup>, MathML) flattened."""
    if element is None:
        return ""
    return _clean("".join(element.itertext()))


def _section_text(element: etree._Element) -> str:
    return _text(element)


def _abstract_sections(abstract: etree._Element | None) -> list[AbstractSection]:
    if abstract is None:
        return []
    sections = []
    for node in abstract.findall("AbstractText"):
        text = _section_text(node)
        if not text:
            continue
        sections.append(
            AbstractSection(
                label=_clean(node.get("Label", "")), text=text, category=node.get("NlmCategory", "")
            )
        )
    return sections


def render_abstract(sections: Iterable[AbstractSection]) -> str:
    """Return the abstract as plain text, each labelled section as 'LABEL: text' on its own paragraph."""
    parts = [f"{section.label}: {section.text}" if section.label else section.text for section in sections]
    return "\n\n".join(parts)


def _authors(author_list: etree._Element | None) -> list[str]:
    if author_list is None:
        return []
    names = []
    for author in author_list.findall("Author"):
        if author.get("ValidYN", "Y") == "N":
            continue
        collective = _text(author.find("CollectiveName"))
        if collective:
            names.append(collective)
            continue
        last = _text(author.find("LastName"))
        initials = _text(author.find("Initials")) or "".join(
            part[0] for part in _text(author.find("ForeName")).split() if part
        )
        if last:
            names.append(f"{last} {initials}".strip())
    return names


def _pub_date(node: etree._Element | None) -> tuple[str, date | None, int | None]:
    if node is None:
        return "", None, None
    medline = _text(node.find("MedlineDate"))
    if medline:
        parsed, year = parse_pub_date(medline)
        return medline, parsed, year
    year_text = _text(node.find("Year"))
    month = _text(node.find("Month")) or _text(node.find("Season"))
    day = _text(node.find("Day"))
    if month.isdecimal() and _month_number(month):
        month = calendar.month_abbr[int(month)]
    raw = " ".join(part for part in (year_text, month, day) if part)
    parsed, parsed_year = parse_pub_date(raw)
    return raw, parsed, parsed_year


def _article_ids(pubmed_data: etree._Element | None) -> dict[str, str]:
    ids: dict[str, str] = {}
    if pubmed_data is None:
        return ids
    # Only the record's own ids: ArticleIdList elements under ReferenceList describe cited works.
    for article_id in pubmed_data.findall("ArticleIdList/ArticleId"):
        id_type = article_id.get("IdType", "")
        value = _text(article_id)
        if id_type and value and id_type not in ids:
            ids[id_type] = value
    return ids


def _doi_from(elocations: Iterable[etree._Element], ids: dict[str, str]) -> str:
    for location in elocations:
        if location.get("EIdType") == "doi" and location.get("ValidYN", "Y") != "N":
            doi = normalize_doi(_text(location))
            if is_doi(doi):
                return doi
    doi = normalize_doi(ids.get("doi", ""))
    return doi if is_doi(doi) else ""


def _pmcid_from(ids: dict[str, str]) -> str:
    pmcid = ids.get("pmc", "") or ids.get("pmcid", "")
    pmcid = pmcid.strip()
    return pmcid if PMCID_RE.fullmatch(pmcid) else ""


def _mesh(citation: etree._Element) -> list[MeshHeading]:
    headings = []
    for heading in citation.findall("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        if descriptor is None:
            continue
        qualifiers = heading.findall("QualifierName")
        major = descriptor.get("MajorTopicYN") == "Y" or any(q.get("MajorTopicYN") == "Y" for q in qualifiers)
        headings.append(
            MeshHeading(descriptor=_text(descriptor), major=major, qualifiers=tuple(_text(q) for q in qualifiers))
        )
    return headings


def _pmid(node: etree._Element | None, where: str) -> str:
    pmid = _text(node)
    if not is_pmid(pmid):
        raise PubmedParseError(f"{where} has no valid PMID (found {pmid!r}).")
    return pmid


def _parse_article(element: etree._Element) -> AbstractRecord:
    citation = element.find("MedlineCitation")
    if citation is None:
        raise PubmedParseError("PubmedArticle without MedlineCitation.")
    pmid = _pmid(citation.find("PMID"), "A PubmedArticle")
    article = citation.find("Article")
    if article is None:
        raise PubmedParseError(f"PubmedArticle {pmid} has no Article element.")
    journal = article.find("Journal")
    title = _text(article.find("ArticleTitle")) or _text(article.find("VernacularTitle"))
    sections = _abstract_sections(article.find("Abstract"))
    raw, parsed, year = _pub_date(journal.find("JournalIssue/PubDate") if journal is not None else None)
    if year is None:
        raw, parsed, year = _pub_date(article.find("ArticleDate"))
    ids = _article_ids(element.find("PubmedData"))
    headings = _mesh(citation)
    return AbstractRecord(
        pmid=pmid,
        title=title,
        abstract=render_abstract(sections),
        sections=sections,
        authors=_authors(article.find("AuthorList")),
        journal=(_text(journal.find("ISOAbbreviation")) if journal is not None else "")
        or _text(citation.find("MedlineJournalInfo/MedlineTA")),
        journal_title=_text(journal.find("Title")) if journal is not None else "",
        pub_date=parsed,
        pub_date_raw=raw,
        year=year,
        mesh_terms=[heading.descriptor for heading in headings],
        mesh_headings=headings,
        publication_types=[_text(node) for node in article.findall("PublicationTypeList/PublicationType")],
        keywords=[_text(node) for node in citation.findall("KeywordList/Keyword") if _text(node)],
        doi=_doi_from(article.findall("ELocationID"), ids),
        pmcid=_pmcid_from(ids),
    )


def _parse_book_article(element: etree._Element) -> AbstractRecord:
    document = element.find("BookDocument")
    if document is None:
        raise PubmedParseError("PubmedBookArticle without BookDocument.")
    pmid = _pmid(document.find("PMID"), "A PubmedBookArticle")
    book = document.find("Book")
    title = _text(document.find("ArticleTitle")) or (_text(book.find("BookTitle")) if book is not None else "")
    sections = _abstract_sections(document.find("Abstract"))
    author_lists = document.findall("AuthorList")
    authors_node = next((node for node in author_lists if node.get("Type", "authors") == "authors"), None)
    authors = _authors(authors_node)
    if not authors and book is not None:
        authors = _authors(book.find("AuthorList"))
    raw, parsed, year = _pub_date(book.find("PubDate") if book is not None else None)
    ids = _article_ids(element.find("PubmedBookData"))
    document_ids = {
        node.get("IdType", ""): _text(node) for node in document.findall("ArticleIdList/ArticleId")
    }
    ids = {**document_ids, **ids}
    return AbstractRecord(
        pmid=pmid,
        title=title,
        abstract=render_abstract(sections),
        sections=sections,
        authors=authors,
        journal=_text(book.find("BookTitle")) if book is not None else "",
        journal_title=_text(book.find("BookTitle")) if book is not None else "",
        pub_date=parsed,
        pub_date_raw=raw,
        year=year,
        publication_types=[_text(node) for node in document.findall("PublicationType")]
        or ["Book Chapter"],
        keywords=[_text(node) for node in document.findall("KeywordList/Keyword") if _text(node)],
        doi=_doi_from(document.findall("ELocationID"), ids),
        pmcid=_pmcid_from(ids),
        is_book=True,
    )


def ncbi_xml_errors(root: etree._Element) -> list[str]:
    """Return the messages of NCBI <ERROR> elements at the top of an E-utilities XML answer."""
    nodes = [root] if root.tag == "ERROR" else root.findall("ERROR")
    return [_text(node) for node in nodes if _text(node)]


def parse_pubmed_xml(data: bytes | str) -> list[AbstractRecord]:
    """Parse an efetch PubmedArticleSet (articles and book articles) into records, in document order."""
    root = parse_xml_safely(data)
    errors = ncbi_xml_errors(root)
    if errors:
        raise PubmedParseError(f"NCBI returned an error instead of records: {'; '.join(errors)}")
    if root.tag == "PubmedArticle" or root.tag == "PubmedBookArticle":
        elements = [root]
    elif root.tag == "PubmedArticleSet":
        elements = [child for child in root if isinstance(child.tag, str)]
    else:
        raise PubmedParseError(f"Expected a PubmedArticleSet, got <{root.tag}>.")
    records = []
    for child in elements:
        if child.tag == "PubmedArticle":
            records.append(_parse_article(child))
        elif child.tag == "PubmedBookArticle":
            records.append(_parse_book_article(child))
        elif child.tag == "DeleteCitation":
            continue
        else:
            raise PubmedParseError(f"Unexpected <{child.tag}> inside PubmedArticleSet.")
    return records


# --- MEDLINE text ------------------------------------------------------------------------------

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


def _medline_sections(abstract: str) -> list[AbstractSection]:
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
    raw_date = (values.get("DP") or [""])[0]
    parsed, year = parse_pub_date(raw_date)
    abstract_text = " ".join(values.get("AB", []))
    sections = _medline_sections(abstract_text)
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
    )


def parse_medline(text: str) -> list[AbstractRecord]:
    """Parse MEDLINE-format text (efetch rettype=medline) into records."""
    records = []
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.strip():
            block.append(line.rstrip("\r"))
        elif block:
            records.append(_medline_record(_medline_fields(block)))
            block = []
    if not records:
        raise PubmedParseError("No MEDLINE records found (each record starts with a 'PMID- ' line).")
    return records


# --- JSONL ---------------------------------------------------------------------------------------

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
        title=_clean(str(obj["title"] or "")),
        abstract=abstract,
        sections=_medline_sections(_clean(abstract)) if abstract else [],
        authors=_string_list(obj.get("authors"), line_number=line_number, key="authors"),
        journal=_clean(str(obj.get("journal") or "")),
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


# --- Files -------------------------------------------------------------------------------------------


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
        if "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            raise PubmedParseError(f"Line {line}: contains a NUL byte, which cannot be stored; remove it.")
        return parse_medline(text) if kind == "medline" else parse_jsonl(text)
    except UnicodeDecodeError as exc:
        raise PubmedParseError(f"{path}: not UTF-8 text ({exc.reason}).") from exc
    except PubmedParseError as exc:
        raise PubmedParseError(f"{path}: {exc}") from exc


def iter_records(paths: Iterable[Path]) -> Iterator[tuple[Path, list[AbstractRecord]]]:
    for path in paths:
        yield path, parse_file(path)
