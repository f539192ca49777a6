"""Citation export: references as RIS, BibTeX, MEDLINE (.nbib) and CSL-JSON for reference managers.

Every format carries the record's identifiers - PMID, DOI, PMCID, NCT id - and its direct link, so a
reference imported into Zotero, EndNote or Mendeley leads back to the same record the answer cited.
RIS is written by `rispy` and BibTeX by `bibtexparser`; MEDLINE and CSL-JSON are plain line and JSON
formats with no maintained writer, so they are written here.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import bibtexparser
import rispy
from bibtexparser import model as bibtex

from evidence import identifiers


class UnknownExportFormat(ValueError):
    """The requested export format is not one MedCite writes."""


@dataclass(frozen=True)
class CitationRecord:
    """One reference as a reference manager needs it; `authors` are "Family Initials" names."""

    title: str
    authors: tuple[str, ...] = ()
    more_authors: bool = False
    journal: str = ""
    journal_title: str = ""
    year: int | None = None
    pmid: str = ""
    doi: str = ""
    pmcid: str = ""
    nct: str = ""
    url: str = ""
    abstract: str = ""
    kind: str = "article"
    publication_types: tuple[str, ...] = field(default_factory=tuple)
    keywords: tuple[str, ...] = field(default_factory=tuple)

    @property
    def urls(self) -> list[str]:
        """Return every direct link for the record: its own URL, PubMed, PMC, DOI, ClinicalTrials.gov."""
        links = [self.url] if self.url else []
        if self.pmid:
            links.append(identifiers.pubmed_url(self.pmid))
        if self.pmcid:
            links.append(identifiers.pmc_url(self.pmcid))
        if self.doi:
            links.append(identifiers.doi_url(self.doi))
        if self.nct:
            links.append(identifiers.ctgov_url(self.nct))
        return list(dict.fromkeys(links))

    @property
    def is_trial_registration(self) -> bool:
        return bool(self.nct) and not (self.pmid or self.doi)


def split_name(name: str) -> tuple[str, str]:
    """Return (family, given) of a PubMed-style name ("Tie J" → ("Tie", "J")); ("", name) if it has no initials."""
    parts = name.split()
    if len(parts) >= 2 and re.fullmatch(r"[A-Z]{1,4}", parts[-1]):
        return " ".join(parts[:-1]), parts[-1]
    return "", name.strip()


def authors_from_short(text: str) -> tuple[tuple[str, ...], bool]:
    """Return the names in a formatted author list ("Tie J et al.", "Tie J, Cohen JD") and whether some were cut."""
    text = text.strip()
    more = bool(re.search(r"\bet al\.?$", text))
    text = re.sub(r",?\s*\bet al\.?$", "", text)
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    return names, more


def _comma_name(name: str) -> str:
    family, given = split_name(name)
    return f"{family}, {given}" if family else given


def _ris(records: Sequence[CitationRecord]) -> str:
    class Writer(rispy.RisWriter):
        def set_header(self, count: int) -> str:  # no "1." line before each record
            return ""

    entries = []
    for record in records:
        entry: dict[str, object] = {
            "type_of_reference": "JOUR" if not record.is_trial_registration else "DATA",
            "title": record.title,
        }
        if record.authors:
            entry["authors"] = [_comma_name(name) for name in record.authors]
        if record.journal_title or record.journal:
            entry["journal_name"] = record.journal_title or record.journal
        if record.journal and record.journal_title and record.journal != record.journal_title:
            entry["alternate_title2"] = record.journal
        if record.year:
            entry["year"] = str(record.year)
        if record.doi:
            entry["doi"] = record.doi
        if record.pmid:
            entry["accession_number"] = record.pmid
            entry["name_of_database"] = "PubMed"
        if record.pmcid:
            entry["custom2"] = record.pmcid  # RIS C2: where PubMed's own RIS export puts the PMCID
        if record.nct:
            entry["custom1"] = record.nct
        entry["urls"] = record.urls
        notes = [f"{label}: {value}" for label, value in _identifiers(record)]
        if record.more_authors:
            notes.append("Author list shortened in the source (et al.).")
        entry["notes"] = notes
        if record.abstract:
            entry["abstract"] = " ".join(record.abstract.split())
        if record.keywords:
            entry["keywords"] = list(record.keywords)
        entries.append(entry)
    return rispy.dumps(entries, implementation=Writer)


def _identifiers(record: CitationRecord) -> list[tuple[str, str]]:
    pairs = [("PMID", record.pmid), ("DOI", record.doi), ("PMCID", record.pmcid), ("NCT", record.nct)]
    return [(label, value) for label, value in pairs if value]


def _ascii_key(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode())


def _bibtex_key(record: CitationRecord, taken: set[str]) -> str:
    family = split_name(record.authors[0])[0] if record.authors else ""
    base = _ascii_key(family or (record.title.split() or ["ref"])[0]).lower() or "ref"
    base += str(record.year or "")
    key, suffix = base, ord("a")
    while key in taken:
        key, suffix = f"{base}{chr(suffix)}", suffix + 1
    taken.add(key)
    return key


def _bibtex_value(text: str) -> str:
    # Braces keep capitals (ctDNA, HFpEF) as written; characters special to LaTeX are escaped.
    escaped = re.sub(r"([&%$#_])", r"\\\1", text.replace("{", "").replace("}", ""))
    return "{" + escaped + "}"


def _bibtex(records: Sequence[CitationRecord]) -> str:
    library = bibtexparser.Library()
    taken: set[str] = set()
    for record in records:
        entry_type = "misc" if record.is_trial_registration else "article"
        fields = [bibtex.Field("title", _bibtex_value(record.title))]
        if record.authors:
            names = [_comma_name(name) for name in record.authors] + (["others"] if record.more_authors else [])
            fields.append(bibtex.Field("author", " and ".join(names)))
        if record.journal_title or record.journal:
            fields.append(bibtex.Field("journal", record.journal_title or record.journal))
        if record.year:
            fields.append(bibtex.Field("year", str(record.year)))
        if record.doi:
            fields.append(bibtex.Field("doi", record.doi))
        if record.pmid:
            fields.append(bibtex.Field("pmid", record.pmid))
        if record.pmcid:
            fields.append(bibtex.Field("pmcid", record.pmcid))
        if record.nct:
            fields.append(bibtex.Field("note", f"ClinicalTrials.gov {record.nct}"))
        if record.urls:
            fields.append(bibtex.Field("url", record.urls[0]))
        if record.abstract:
            fields.append(bibtex.Field("abstract", re.sub(r"([&%$#_])", r"\\\1", " ".join(record.abstract.split()))))
        library.add(bibtex.Entry(entry_type, _bibtex_key(record, taken), fields))
    return bibtexparser.write_string(library)


# MEDLINE tags are four characters wide, then "- "; long values continue on lines indented by six spaces.
_MEDLINE_WIDTH = 88


def _medline_lines(tag: str, value: str) -> list[str]:
    words, lines, line = value.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > _MEDLINE_WIDTH - 6:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return [f"{tag:<4}- {lines[0]}", *(f"      {rest}" for rest in lines[1:])]


def _medline(records: Sequence[CitationRecord]) -> str:
    blocks = []
    for record in records:
        lines: list[str] = []
        if record.pmid:
            lines += _medline_lines("PMID", record.pmid)
        lines += _medline_lines("TI", record.title)
        if record.abstract:
            lines += _medline_lines("AB", record.abstract)
        for name in record.authors:
            lines += _medline_lines("FAU", _comma_name(name))
            lines += _medline_lines("AU", name)
        default_types = () if record.is_trial_registration else ("Journal Article",)
        for publication_type in record.publication_types or default_types:
            lines += _medline_lines("PT", publication_type)
        if record.year:
            lines += _medline_lines("DP", str(record.year))
        if record.journal_title:
            lines += _medline_lines("JT", record.journal_title)
        if record.journal:
            lines += _medline_lines("TA", record.journal)
        for keyword in record.keywords:
            lines += _medline_lines("OT", keyword)
        if record.pmcid:
            lines += _medline_lines("PMC", record.pmcid)
        if record.nct:
            lines += _medline_lines("SI", f"ClinicalTrials.gov/{record.nct}")
        if record.doi:
            lines += _medline_lines("AID", f"{record.doi} [doi]")
            lines += _medline_lines("LID", f"{record.doi} [doi]")
        source = ". ".join(part for part in (record.journal or record.journal_title, str(record.year or "")) if part)
        if source:
            lines += _medline_lines("SO", source + ".")
        if record.url and record.url not in record.urls[1:]:
            lines += _medline_lines("URL", record.url)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def csl_item(record: CitationRecord, *, item_id: str) -> dict[str, object]:
    """Return the CSL-JSON item of one record (the format citeproc, Zotero and pandoc read)."""
    item: dict[str, object] = {
        "id": item_id,
        "type": "dataset" if record.is_trial_registration else "article-journal",
        "title": record.title,
    }
    authors: list[dict[str, str]] = []
    for name in record.authors:
        family, given = split_name(name)
        authors.append({"family": family, "given": given} if family else {"literal": given})
    if authors:
        item["author"] = authors
    if record.journal_title or record.journal:
        item["container-title"] = record.journal_title or record.journal
    if record.journal:
        item["container-title-short"] = record.journal
    if record.year:
        item["issued"] = {"date-parts": [[record.year]]}
    if record.doi:
        item["DOI"] = record.doi
    if record.pmid:
        item["PMID"] = record.pmid
    if record.pmcid:
        item["PMCID"] = record.pmcid
    if record.nct:
        item["number"] = record.nct
    if record.urls:
        item["URL"] = record.urls[0]
    if record.abstract:
        item["abstract"] = record.abstract
    if record.more_authors:
        item["note"] = "Author list shortened in the source (et al.)."
    return item


def _csl_json(records: Sequence[CitationRecord]) -> str:
    taken: set[str] = set()
    items = [csl_item(record, item_id=_bibtex_key(record, taken)) for record in records]
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True)
class ExportFormat:
    """One file format: its name in `?format=`, label, media type, file extension and writer."""

    key: str
    label: str
    media_type: str
    extension: str
    write: Callable[[Sequence[CitationRecord]], str]


EXPORT_FORMATS: dict[str, ExportFormat] = {
    fmt.key: fmt
    for fmt in (
        ExportFormat("ris", "RIS (EndNote, Zotero, Mendeley)", "application/x-research-info-systems", "ris", _ris),
        ExportFormat("bibtex", "BibTeX", "application/x-bibtex", "bib", _bibtex),
        ExportFormat("nbib", "MEDLINE / PubMed (.nbib)", "application/nbib", "nbib", _medline),
        ExportFormat("csljson", "CSL-JSON", "application/vnd.citationstyles.csl+json", "json", _csl_json),
    )
}


def check_export_format(name: str | None) -> ExportFormat:
    """Return the export format called `name`; raise UnknownExportFormat naming the formats there are."""
    key = (name or "").strip().lower().replace("-", "").replace("_", "")
    key = {"bib": "bibtex", "medline": "nbib", "csl": "csljson", "json": "csljson"}.get(key, key)
    if key in EXPORT_FORMATS:
        return EXPORT_FORMATS[key]
    asked = f"Unknown export format {name!r}" if name else "No export format given"
    raise UnknownExportFormat(f"{asked}; use one of {', '.join(EXPORT_FORMATS)} (e.g. ?format=ris).")


@dataclass(frozen=True)
class CitationFile:
    """An exported file: its text, media type and a download name."""

    content: str
    media_type: str
    filename: str


def citations_export(*, records: Iterable[CitationRecord], fmt: ExportFormat, name: str) -> CitationFile:
    """Return `records` written in `fmt` as a file called `name` plus the format's extension."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "references"
    return CitationFile(
        content=fmt.write(list(records)),
        media_type=f"{fmt.media_type}; charset=utf-8",
        filename=f"{stem}.{fmt.extension}",
    )


def record_from_reference(reference: dict[str, object]) -> CitationRecord:
    """Return the citation record of an answer's reference (`{"pmid"|"doi"|"nct", "url", "title", ...}`)."""
    authors, more = authors_from_short(str(reference.get("authors") or ""))
    year = reference.get("year")
    return CitationRecord(
        title=str(reference.get("title") or ""),
        authors=authors,
        more_authors=more,
        journal=str(reference.get("journal") or ""),
        year=year if isinstance(year, int) else None,
        pmid=str(reference.get("pmid") or ""),
        doi=str(reference.get("doi") or ""),
        pmcid=str(reference.get("pmcid") or ""),
        nct=str(reference.get("nct") or ""),
        url=str(reference.get("url") or ""),
    )
