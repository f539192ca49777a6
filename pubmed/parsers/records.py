"""PubMed records as MedCite stores them, whatever format they came in, and PubMed's date strings."""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date


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
class CommentCorrection:
    """A retraction, erratum or expression-of-concern link (PubMed `CommentsCorrections`) to another record."""

    type: str  # PubMed's RefType: RetractionIn, RetractionOf, ErratumIn, ExpressionOfConcernIn
    pmid: str = ""
    source: str = ""  # the citation of the linked notice, e.g. "Lancet. 2010 Feb 6;375(9713):445"
    note: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"type": self.type, "pmid": self.pmid, "source": self.source, "note": self.note}


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
    corrections: list[CommentCorrection] = field(default_factory=list)

    @property
    def mesh_major(self) -> list[str]:
        return [heading.descriptor for heading in self.mesh_headings if heading.major]


_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name}
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}
_WS = re.compile(r"\s+")


def clean_text(text: str) -> str:
    return _WS.sub(" ", text).strip()


def month_number(token: str) -> int | None:
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
    raw = clean_text(raw)
    found = re.search(r"(1[6-9]\d\d|2\d\d\d)", raw)
    if not found:
        return None, None
    year = int(found.group(1))
    rest = raw[found.end():].lstrip(" -/")
    parts = re.split(r"[\s/\-]+", rest) if rest else []
    month = month_number(parts[0]) if parts else None
    day = None
    if month and len(parts) > 1 and parts[1].isdecimal():
        day = int(parts[1])
        if not 1 <= day <= calendar.monthrange(year, month)[1]:
            day = None
    return date(year, month or 1, day or 1), year


def render_abstract(sections: Iterable[AbstractSection]) -> str:
    """Return the abstract as plain text, each labelled section as 'LABEL: text' on its own paragraph."""
    parts = [f"{section.label}: {section.text}" if section.label else section.text for section in sections]
    return "\n\n".join(parts)


@dataclass(frozen=True)
class RecordEntry:
    """One top-level entry of a record file: a record to store, or the PMIDs PubMed deleted (`DeleteCitation`)."""

    position: int  # 1-based, counting records and DeleteCitation elements in file order
    line: int
    record: AbstractRecord | None = None
    deleted_pmids: tuple[str, ...] = ()
