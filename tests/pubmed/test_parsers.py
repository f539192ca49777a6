"""Parsers on every real recording, on hostile XML, and on MEDLINE and JSONL input."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pubmed.parsers import (
    AbstractSection,
    PubmedParseError,
    parse_file,
    parse_jsonl,
    parse_medline,
    parse_pub_date,
    parse_pubmed_xml,
)


def _manifest_counts(shared_data: Path) -> dict[str, tuple[int, int]]:
    manifest = json.loads((shared_data / "manifest.json").read_text())
    counts = {}
    for entry in manifest["files"]:
        match = re.fullmatch(r"PubmedArticle=(\d+) abstracts=(\d+)", entry["records"])
        if match:
            counts[entry["path"]] = (int(match.group(1)), int(match.group(2)))
    return counts


def test_every_real_efetch_recording_parses_to_the_manifest_counts(shared_data: Path, efetch_files: list[Path]) -> None:
    counts = _manifest_counts(shared_data)
    assert len(efetch_files) == 23
    assert {str(p.relative_to(shared_data)) for p in efetch_files} == set(counts)
    for path in efetch_files:
        records = parse_pubmed_xml(path.read_bytes())
        articles, with_abstract = counts[str(path.relative_to(shared_data))]
        assert len(records) == articles, path.name
        assert sum(1 for r in records if r.abstract) == with_abstract, path.name
        for record in records:
            assert re.fullmatch(r"[1-9]\d*", record.pmid)
            assert record.title, f"{path.name} {record.pmid} has no title"
            assert record.year is not None and 1900 < record.year < 2030
            # Inline markup (<i>, <sup>, MathML) is flattened to its text.
            assert not re.search(r"</?(?:i|b|u|sup|sub|mml:\w+)\b", record.title + record.abstract)


def test_structured_abstract_keeps_labels_doi_authors_and_major_mesh(eutils_dir: Path) -> None:
    (record,) = parse_pubmed_xml((eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_bytes())
    assert record.pmid == "22663011"
    assert record.title.startswith("Improved survival with MEK inhibition in BRAF-mutated melanoma")
    assert [s.label for s in record.sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert record.abstract.startswith("BACKGROUND: ")
    assert "\n\nMETHODS: " in record.abstract
    assert record.doi == "10.1056/NEJMoa1203421"
    assert record.journal == "N Engl J Med"
    assert record.pub_date == date(2012, 7, 12)
    assert record.pub_date_raw == "2012 Jul 12"
    assert len(record.authors) == 26
    assert record.authors[:2] == ["Flaherty KT", "Robert C"]
    assert "Antineoplastic Agents" in record.mesh_major
    assert "Clinical Trial, Phase III" in record.publication_types
    assert len(record.mesh_terms) == 20


def test_collective_author_is_kept_in_order(eutils_dir: Path) -> None:
    (record,) = parse_pubmed_xml((eutils_dir / "pubmed-client/efetch_pubmed_xml/31978945.xml").read_bytes())
    assert "China Novel Coronavirus Investigating and Research Team" in record.authors
    assert record.pmcid == "PMC7092803"
    assert record.doi == "10.1056/NEJMoa2001017"


def test_record_without_abstract_has_empty_abstract_and_no_sections(eutils_dir: Path) -> None:
    (record,) = parse_pubmed_xml((eutils_dir / "pubmed-client/efetch_pubmed_xml/27350240.xml").read_bytes())
    assert record.abstract == ""
    assert record.sections == []
    assert record.publication_types == ["Journal Article", "Comment"]


def test_season_and_month_range_dates(eutils_dir: Path) -> None:
    data = (eutils_dir / "biopython/efetch_pubmed_abstract_12091962_9997.xml").read_bytes()
    records = {r.pmid: r for r in parse_pubmed_xml(data)}
    assert records["12091962"].pub_date_raw == "1990 Spring"
    assert records["12091962"].pub_date == date(1990, 3, 1)
    (radiology,) = parse_pubmed_xml((eutils_dir / "pubmed-client/efetch_pubmed_xml/29540945.xml").read_bytes())
    assert radiology.pub_date_raw == "2018 Jan-Feb"
    assert radiology.pub_date == date(2018, 1, 1)


def test_medline_date_is_parsed_and_kept_raw(eutils_dir: Path) -> None:
    data = (eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_text()
    # The same real record with its PubDate written the way older citations carry it.
    data = re.sub(r"<PubDate>.*?</PubDate>", "<PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>",
                  data, count=1, flags=re.S)
    (record,) = parse_pubmed_xml(data.encode())
    assert record.pub_date_raw == "1998 Dec-1999 Jan"
    assert record.pub_date == date(1998, 12, 1)
    assert record.year == 1998


def test_doi_falls_back_to_article_id_list(eutils_dir: Path) -> None:
    data = (eutils_dir / "biopython/efetch_pubmed_11748933_11700088.xml").read_bytes()
    records = {r.pmid: r for r in parse_pubmed_xml(data)}
    assert records["11748933"].doi == "10.1006/cryo.2001.2328"
    # ArticleIdList entries inside ReferenceList belong to cited works, never to the record.
    (gut,) = parse_pubmed_xml((eutils_dir / "biopython/efetch_pubmed_html_tags_27797938.xml").read_bytes())
    assert gut.doi == "10.1136/gutjnl-2016-312510"
    assert gut.pmcid == "PMC5442267"


def test_html_and_mathml_are_flattened_to_text(eutils_dir: Path) -> None:
    (record,) = parse_pubmed_xml((eutils_dir / "biopython/efetch_pubmed_html_mathml_30108519.xml").read_bytes())
    assert record.title == (
        'A "Blood Relationship" Between the Overlooked Minimum Lactate Equivalent and Maximal Lactate '
        "Steady State in Trained Runners. Back to the Old Days?"
    )
    assert "LEmin" in record.abstract


BOOK_ARTICLE = b"""<?xml version="1.0" ?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">
<PubmedArticleSet>
<PubmedBookArticle>
  <BookDocument>
    <PMID Version="1">20301295</PMID>
    <ArticleIdList><ArticleId IdType="bookaccession">NBK1116</ArticleId></ArticleIdList>
    <Book>
      <Publisher><PublisherName>University of Washington, Seattle</PublisherName></Publisher>
      <BookTitle book="gene">GeneReviews<sup>&#xae;</sup></BookTitle>
      <PubDate><Year>1993</Year></PubDate>
      <AuthorList Type="editors"><Author>
        <LastName>Adam</LastName><ForeName>Margaret P</ForeName><Initials>MP</Initials>
      </Author></AuthorList>
    </Book>
    <ArticleTitle book="gene" part="hfe">HFE Hemochromatosis</ArticleTitle>
    <Language>eng</Language>
    <AuthorList Type="authors"><Author>
      <LastName>Barton</LastName><ForeName>James C</ForeName><Initials>JC</Initials>
    </Author></AuthorList>
    <PublicationType UI="D016454">Review</PublicationType>
    <Abstract>
      <AbstractText Label="CLINICAL CHARACTERISTICS">HFE hemochromatosis is characterized by
        inappropriately high absorption of iron.</AbstractText>
      <AbstractText Label="MANAGEMENT">Treatment of manifestations: therapeutic phlebotomy.</AbstractText>
    </Abstract>
  </BookDocument>
  <PubmedBookData><History><PubMedPubDate PubStatus="pubmed"><Year>2010</Year></PubMedPubDate></History>
    <PublicationStatus>ppublish</PublicationStatus>
    <ArticleIdList><ArticleId IdType="pubmed">20301295</ArticleId></ArticleIdList>
  </PubmedBookData>
</PubmedBookArticle>
</PubmedArticleSet>"""


def test_pubmed_book_article() -> None:
    (record,) = parse_pubmed_xml(BOOK_ARTICLE)
    assert record.is_book is True
    assert record.pmid == "20301295"
    assert record.title == "HFE Hemochromatosis"
    assert record.journal == "GeneReviews®"
    assert record.authors == ["Barton JC"]
    assert record.year == 1993
    assert [s.label for s in record.sections] == ["CLINICAL CHARACTERISTICS", "MANAGEMENT"]
    assert record.publication_types == ["Review"]


@pytest.mark.parametrize(
    "payload",
    [
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        b"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>&xxe;"
        b"</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>",
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">'
        b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;">]><PubmedArticleSet>&lol3;</PubmedArticleSet>',
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % remote SYSTEM "http://127.0.0.1:9/evil.dtd"> %remote;]>'
        b"<PubmedArticleSet/>",
    ],
    ids=["xxe-file", "billion-laughs", "parameter-entity"],
)
def test_entity_declarations_are_refused(payload: bytes) -> None:
    with pytest.raises(PubmedParseError, match=r"XML that declares entities \(<!ENTITY \.\.\.>\) is refused"):
        parse_pubmed_xml(payload)


def test_truncated_recording_is_a_clear_error(eutils_dir: Path) -> None:
    data = (eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_bytes()
    with pytest.raises(PubmedParseError, match=r"^Malformed XML: "):
        parse_pubmed_xml(data[: len(data) // 2])


def test_ncbi_error_document_is_not_an_empty_result(eutils_dir: Path) -> None:
    with pytest.raises(PubmedParseError, match=r"^NCBI returned an error instead of records: Invalid db name"):
        parse_pubmed_xml((eutils_dir / "klortho-2012/esearch.baderror.xml").read_bytes())


def test_wrong_document_type_is_refused(eutils_dir: Path) -> None:
    with pytest.raises(PubmedParseError, match=r"Expected a PubmedArticleSet, got <eSearchResult>"):
        parse_pubmed_xml((eutils_dir / "biopython/esearch_pubmed_biopython.xml").read_bytes())


def test_medline_recordings(eutils_dir: Path) -> None:
    counts = {"medline_pubmed_result1.txt": 1, "medline_pubmed_result2.txt": 4, "medline_pubmed_result3.txt": 1}
    for name, expected in counts.items():
        assert len(parse_medline((eutils_dir / "biopython" / name).read_text())) == expected
    (record,) = parse_medline((eutils_dir / "biopython/medline_pubmed_result3.txt").read_text())
    assert record.pmid == "23039619"
    assert record.doi == "10.1118/1.4748329"
    assert record.journal == "Med Phys"
    assert record.pub_date == date(2012, 10, 1)
    assert [s.label for s in record.sections] == ["PURPOSE", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert record.authors == ["Qiao S", "Shen G", "Bai J", "Chen Y"]
    assert record.title == "Effects of different parameters in the fast scanning method for HIFU treatment."


def test_medline_major_mesh_flag(eutils_dir: Path) -> None:
    records = parse_medline((eutils_dir / "biopython/medline_pubmed_result2.txt").read_text())
    headings = [h for r in records for h in r.mesh_headings]
    assert any(h.major for h in headings)
    assert all(not h.descriptor.startswith("*") for h in headings)


def test_parse_file_detects_each_format(tmp_path: Path, eutils_dir: Path) -> None:
    jsonl = tmp_path / "abstracts.jsonl"
    jsonl.write_text('{"pmid": "123", "title": "T", "abstract": "BACKGROUND: One. METHODS: Two."}\n')
    assert parse_file(jsonl)[0].sections == [AbstractSection("BACKGROUND", "One."), AbstractSection("METHODS", "Two.")]
    assert len(parse_file(eutils_dir / "biopython/medline_pubmed_result2.txt")) == 4
    assert len(parse_file(eutils_dir / "klortho-2012/efetch.pubmed.xml")) == 2
    odd = tmp_path / "notes.bin"
    odd.write_text("hello")
    with pytest.raises(PubmedParseError, match="cannot tell the format"):
        parse_file(odd)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"pmid": "1", "title": "x"}', "Line 1: missing required key(s) abstract."),
        ('{"pmid": "0123", "title": "x", "abstract": ""}',
         "Line 1: '0123' is not a PMID (digits only, no leading zero)."),
        ('{"pmid": "1", "title": "x", "abstract": "", "colour": 1}',
         "Line 1: unknown key(s) colour; allowed: abstract, authors, journal, mesh_terms, pmid, pub_date, title."),
        ('{"pmid": 1, "title": "x", "abstract": "", "authors": 5}',
         "Line 1: 'authors' must be a list of strings or a ';'-separated string."),
        ("[1, 2]", "Line 1: expected a JSON object."),
        ('{"pmid": ', "Line 1: not valid JSON (Expecting value)."),
    ],
)
def test_jsonl_errors_name_the_line_and_problem(line: str, message: str) -> None:
    with pytest.raises(PubmedParseError) as excinfo:
        parse_jsonl(line)
    assert str(excinfo.value) == message


def test_jsonl_optional_fields() -> None:
    (record,) = parse_jsonl(
        '{"pmid": 35657320, "title": "A trial", "abstract": "Text.", "authors": "Smith J; Doe A", '
        '"journal": "N Engl J Med", "pub_date": "2022-06-02", "mesh_terms": ["Colonic Neoplasms"]}'
    )
    assert record.pmid == "35657320"
    assert record.authors == ["Smith J", "Doe A"]
    assert record.pub_date == date(2022, 6, 2)
    assert record.mesh_terms == ["Colonic Neoplasms"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2021", (date(2021, 1, 1), 2021)),
        ("2021 Sep", (date(2021, 9, 1), 2021)),
        ("2021 Sep 15", (date(2021, 9, 15), 2021)),
        ("1998 Dec-1999 Jan", (date(1998, 12, 1), 1998)),
        ("2000 Spring", (date(2000, 3, 1), 2000)),
        ("2021-09-15", (date(2021, 9, 15), 2021)),
        ("2021/02/30", (date(2021, 2, 1), 2021)),
        ("n.d.", (None, None)),
    ],
)
def test_parse_pub_date_table(raw: str, expected: tuple) -> None:
    assert parse_pub_date(raw) == expected


@given(st.dates(min_value=date(1800, 1, 1), max_value=date(2099, 12, 31)))
def test_parse_pub_date_round_trips_pubmed_style_dates(value: date) -> None:
    assert parse_pub_date(value.strftime("%Y %b %d")) == (value, value.year)
    assert parse_pub_date(value.isoformat()) == (value, value.year)
