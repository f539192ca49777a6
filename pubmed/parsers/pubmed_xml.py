"""Parse PubMed efetch XML (PubmedArticleSet): articles and book articles.

XML is parsed with lxml configured so that no entity is expanded, no DTD or other network
resource is loaded and no oversized tree is built; documents that declare entities are refused
outright, which rules out both XXE and "billion laughs" expansion.
"""

from __future__ import annotations

import calendar
import io
import re
from collections.abc import Iterable, Iterator
from datetime import date
from typing import IO

from lxml import etree

from evidence.identifiers import PMCID_RE, is_doi, is_pmid, normalize_doi
from evidence.integrity import notice_type
from pubmed.parsers.records import (
    AbstractRecord,
    AbstractSection,
    CommentCorrection,
    MeshHeading,
    PubmedParseError,
    RecordEntry,
    clean_text,
    month_number,
    parse_pub_date,
    render_abstract,
)

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
    return clean_text("".join(element.itertext()))


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
                label=clean_text(node.get("Label", "")), text=text, category=node.get("NlmCategory", "")
            )
        )
    return sections


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
    if month.isdecimal() and month_number(month):
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


def _corrections(citation: etree._Element) -> list[CommentCorrection]:
    """Return the retraction, erratum and expression-of-concern links of a MedlineCitation (other links are skipped)."""
    found = []
    for node in citation.findall("CommentsCorrectionsList/CommentsCorrections"):
        kind = notice_type(node.get("RefType", ""))
        if not kind:
            continue
        pmid = _text(node.find("PMID"))
        found.append(
            CommentCorrection(
                type=kind,
                pmid=pmid if is_pmid(pmid) else "",
                source=_text(node.find("RefSource")),
                note=_text(node.find("Note")),
            )
        )
    return found


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
        corrections=_corrections(citation),
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


_LIBXML_WHERE = re.compile(r", line \d+, column \d+$")
_TOP_LEVEL = ("PubmedArticle", "PubmedBookArticle", "DeleteCitation")
_DOCUMENTS = {"PubmedArticleSet", "PubmedArticle", "PubmedBookArticle"}


class _EntityRefusingReader:
    """A file wrapper for `iterparse` that refuses entity declarations wherever they appear in the stream."""

    def __init__(self, source: IO[bytes]) -> None:
        self.source = source
        self.tail = b""

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        if _ENTITY_DECL.search(self.tail + data):
            raise PubmedParseError(
                "XML that declares entities (<!ENTITY ...>) is refused: it could read local files or expand "
                "without bound. PubMed never sends entity declarations."
            )
        self.tail = data[-8:]
        return data


def _deleted_pmids(element: etree._Element, where: str) -> tuple[str, ...]:
    pmids = tuple(_text(node) for node in element.findall("PMID"))
    bad = [pmid for pmid in pmids if not is_pmid(pmid)]
    if bad or not pmids:
        raise PubmedParseError(f"{where}: DeleteCitation without valid PMIDs (found {list(pmids)!r}).")
    return pmids


def iter_pubmed_xml(source: IO[bytes]) -> Iterator[RecordEntry]:
    """Yield the records and deletions of a PubmedArticleSet read from `source`, in document order, streamed.

    Each record's element is cleared, and the ones before it dropped, as soon as it is parsed, so memory
    stays flat however large the file. Errors say which record (1-based position) and line they are in.
    """
    reader = _EntityRefusingReader(source)
    context = etree.iterparse(
        reader, events=("end",), tag=_TOP_LEVEL, resolve_entities=False, no_network=True, load_dtd=False,
        dtd_validation=False, huge_tree=False, remove_comments=True, remove_pis=True,
    )
    position, line, pmid = 0, 1, ""
    try:
        for _, element in context:
            parent = element.getparent()
            if parent is not None and parent.getparent() is not None:
                continue  # not a top-level entry; PubmedArticleSet holds records directly
            position += 1
            line = element.sourceline or line
            where = f"record {position:,} (line {line:,})"
            if parent is not None and parent.tag != "PubmedArticleSet":
                raise PubmedParseError(f"Expected a PubmedArticleSet, got <{parent.tag}>.")
            try:
                if element.tag == "DeleteCitation":
                    entry = RecordEntry(position=position, line=line, deleted_pmids=_deleted_pmids(element, where))
                    pmid = ""
                else:
                    record = _parse_article(element) if element.tag == "PubmedArticle" else _parse_book_article(element)
                    entry = RecordEntry(position=position, line=line, record=record)
                    pmid = record.pmid
            except PubmedParseError as exc:
                message = str(exc)
                raise PubmedParseError(message if message.startswith(where) else f"{where}: {message}") from exc
            element.clear(keep_tail=True)
            if parent is not None:
                while (previous := element.getprevious()) is not None:
                    if isinstance(previous.tag, str) and previous.tag not in _TOP_LEVEL:
                        raise PubmedParseError(f"Unexpected <{previous.tag}> inside PubmedArticleSet, before {where}.")
                    del parent[0]
            yield entry
    except etree.XMLSyntaxError as exc:
        after = f"after record {position:,} (PMID {pmid})" if pmid else f"after record {position:,}"
        problem = _LIBXML_WHERE.sub("", exc.msg or "")  # the line is said once, below
        raise PubmedParseError(
            f"Malformed XML: {problem} (line {exc.lineno:,}, {after if position else 'before the first record'})."
        ) from exc
    root = context.root
    if root is None:
        raise PubmedParseError("The XML document is empty.")
    errors = ncbi_xml_errors(root)
    if errors:
        raise PubmedParseError(f"NCBI returned an error instead of records: {'; '.join(errors)}")
    if root.tag not in _DOCUMENTS:
        raise PubmedParseError(f"Expected a PubmedArticleSet, got <{root.tag}>.")
    for child in root:
        if isinstance(child.tag, str) and child.tag not in _TOP_LEVEL:
            raise PubmedParseError(f"Unexpected <{child.tag}> inside PubmedArticleSet.")


def parse_pubmed_xml(data: bytes | str) -> list[AbstractRecord]:
    """Parse an efetch PubmedArticleSet (articles and book articles) into records, in document order."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not data.strip():
        raise PubmedParseError("The XML document is empty.")
    return [entry.record for entry in iter_pubmed_xml(io.BytesIO(data)) if entry.record is not None]
