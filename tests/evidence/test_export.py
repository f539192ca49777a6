"""Citation export formats: what a reference manager reads back from each file."""

from __future__ import annotations

import json
import re

import bibtexparser
import pytest
import rispy

from evidence.export import (
    EXPORT_FORMATS,
    CitationRecord,
    UnknownExportFormat,
    authors_from_short,
    check_export_format,
    citations_export,
    record_from_reference,
    split_name,
)

ARTICLE = CitationRecord(
    title="Circulating Tumor DNA Analysis Guiding Adjuvant Therapy in Stage II Colon Cancer",
    authors=("Tie J", "Cohen JD", "Lahouel K", "Lo SN"),
    journal="N Engl J Med",
    journal_title="The New England journal of medicine",
    year=2022,
    pmid="35657320",
    doi="10.1056/NEJMoa2200075",
    pmcid="PMC9701133",
    abstract="Background: ctDNA & risk of recurrence_50%.",
)
TRIAL = CitationRecord(title="DYNAMIC-III", authors=("Tie J",), more_authors=True, year=2023, nct="NCT04120701")


def write(key: str, *records: CitationRecord) -> str:
    return citations_export(records=records, fmt=EXPORT_FORMATS[key], name="answer 7").content


def test_ris_carries_every_identifier_and_link() -> None:
    [article, trial] = rispy.loads(write("ris", ARTICLE, TRIAL))
    assert article["type_of_reference"] == "JOUR"
    assert article["authors"] == ["Tie, J", "Cohen, JD", "Lahouel, K", "Lo, SN"]
    assert (article["accession_number"], article["doi"], article["custom2"]) == (
        "35657320",
        "10.1056/NEJMoa2200075",
        "PMC9701133",
    )
    assert article["urls"] == [
        "https://pubmed.ncbi.nlm.nih.gov/35657320/",
        "https://pmc.ncbi.nlm.nih.gov/articles/PMC9701133/",
        "https://doi.org/10.1056/NEJMoa2200075",
    ]
    assert article["journal_name"] == "The New England journal of medicine"
    assert (trial["type_of_reference"], trial["custom1"]) == ("DATA", "NCT04120701")
    assert trial["urls"] == ["https://clinicaltrials.gov/study/NCT04120701"]
    assert "Author list shortened in the source (et al.)." in trial["notes"]


def test_bibtex_parses_back_with_unique_keys_and_escaped_text() -> None:
    library = bibtexparser.parse_string(write("bibtex", ARTICLE, ARTICLE, TRIAL))
    assert not library.failed_blocks
    assert [entry.key for entry in library.entries] == ["tie2022", "tie2022a", "tie2023"]
    article = library.entries[0]
    assert article.entry_type == "article"
    assert article["author"] == "Tie, J and Cohen, JD and Lahouel, K and Lo, SN"
    assert (article["doi"], article["pmid"], article["pmcid"]) == ("10.1056/NEJMoa2200075", "35657320", "PMC9701133")
    assert article["url"] == "https://pubmed.ncbi.nlm.nih.gov/35657320/"
    assert article["abstract"] == r"Background: ctDNA \& risk of recurrence\_50\%."
    trial = library.entries[2]
    assert (trial.entry_type, trial["author"]) == ("misc", "Tie, J and others")
    assert trial["note"] == "ClinicalTrials.gov NCT04120701"


def test_medline_lines_use_pubmed_tags() -> None:
    text = write("nbib", ARTICLE)
    tags = [(line[:4].strip(), line[6:]) for line in text.splitlines() if line and not line.startswith(" ")]
    assert tags[:2] == [("PMID", "35657320"), ("TI", ARTICLE.title)]
    assert ("FAU", "Tie, J") in tags and ("AU", "Tie J") in tags
    assert ("PMC", "PMC9701133") in tags
    assert ("AID", "10.1056/NEJMoa2200075 [doi]") in tags
    assert ("TA", "N Engl J Med") in tags and ("DP", "2022") in tags
    # Every line is a tag line or a six-space continuation, as PubMed writes them.
    assert all(re.match(r"^([A-Z]{2,4} *- |      \S)", line) for line in text.splitlines() if line)


def test_csl_json_items_for_citeproc() -> None:
    [article, trial] = json.loads(write("csljson", ARTICLE, TRIAL))
    assert article["id"] == "tie2022" and article["type"] == "article-journal"
    assert article["author"][:2] == [{"family": "Tie", "given": "J"}, {"family": "Cohen", "given": "JD"}]
    assert (article["DOI"], article["PMID"], article["PMCID"]) == ("10.1056/NEJMoa2200075", "35657320", "PMC9701133")
    assert article["issued"] == {"date-parts": [[2022]]}
    assert article["container-title-short"] == "N Engl J Med"
    assert (trial["type"], trial["number"], trial["URL"]) == (
        "dataset",
        "NCT04120701",
        "https://clinicaltrials.gov/study/NCT04120701",
    )


def test_the_file_is_named_after_the_export_and_format() -> None:
    exported = citations_export(records=[ARTICLE], fmt=EXPORT_FORMATS["bibtex"], name="answer 7/refs")
    assert (exported.filename, exported.media_type) == ("answer-7-refs.bib", "application/x-bibtex; charset=utf-8")


@pytest.mark.parametrize(
    ("asked", "key"), [("ris", "ris"), ("RIS", "ris"), ("bib", "bibtex"), ("medline", "nbib"), ("csl-json", "csljson")]
)
def test_format_names_and_aliases(asked: str, key: str) -> None:
    assert check_export_format(asked).key == key


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        ("xml", "Unknown export format 'xml'; use one of ris, bibtex, nbib, csljson (e.g. ?format=ris)."),
        (None, "No export format given; use one of ris, bibtex, nbib, csljson (e.g. ?format=ris)."),
    ],
)
def test_an_unknown_format_names_the_formats_there_are(asked: str | None, message: str) -> None:
    with pytest.raises(UnknownExportFormat) as error:
        check_export_format(asked)
    assert str(error.value) == message


def test_answer_references_become_records() -> None:
    record = record_from_reference(
        {"pmid": "35657320", "doi": "10.1056/NEJMoa2200075", "url": "https://pubmed.ncbi.nlm.nih.gov/35657320/",
         "title": "DYNAMIC", "authors": "Tie J et al.", "journal": "N Engl J Med", "year": 2022}
    )
    assert (record.authors, record.more_authors, record.year) == (("Tie J",), True, 2022)
    assert authors_from_short("Tie J, Cohen JD") == (("Tie J", "Cohen JD"), False)
    assert split_name("World Health Organization") == ("", "World Health Organization")
