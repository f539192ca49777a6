from dataclasses import replace

import pytest

from evidence.references import format_authors, format_reference, is_direct_url, quality_badges, reference_url
from evidence.sources import EvidenceSource


@pytest.mark.parametrize(
    ("authors", "expected"),
    [
        (["Tie J", "Cohen JD", "Lahouel K", "Lo SN"], "Tie J et al."),
        (["Tie J", "Cohen JD", "Lahouel K"], "Tie J, Cohen JD, Lahouel K"),
        (["Anker SD"], "Anker SD"),
        ([], ""),
        (["  Kotani D ", "", "Oki E", "Nakamura Y", "Yukami H"], "Kotani D et al."),
        ("Tie J et al.", "Tie J et al."),
    ],
)
def test_authors_are_shortened_to_first_author_et_al_beyond_three(authors, expected):
    assert format_authors(authors) == expected


@pytest.mark.parametrize(
    ("identifiers", "expected"),
    [
        (
            {"pmid": "35657320", "pmcid": "PMC9701133", "doi": "10.1056/NEJMoa2200075"},
            "https://pubmed.ncbi.nlm.nih.gov/35657320/",
        ),
        ({"pmcid": "PMC9701133", "doi": "10.1056/NEJMoa2200075"}, "https://pmc.ncbi.nlm.nih.gov/articles/PMC9701133/"),
        ({"doi": "10.1056/NEJMoa2200075", "nct": "NCT03057951"}, "https://doi.org/10.1056/NEJMoa2200075"),
        ({"nct": "NCT03057951"}, "https://clinicaltrials.gov/study/NCT03057951"),
        (
            {"curated_url": "https://www.escardio.org/Guidelines/Clinical-Practice-Guidelines/Atrial-Fibrillation"},
            "https://www.escardio.org/Guidelines/Clinical-Practice-Guidelines/Atrial-Fibrillation",
        ),
        ({"curated_url": "https://www.google.com/search?q=DYNAMIC+trial"}, ""),
        ({"curated_url": "https://pubmed.ncbi.nlm.nih.gov/?term=DYNAMIC"}, ""),
        ({"pmid": "not-a-pmid"}, ""),
    ],
)
def test_reference_url_prefers_pubmed_then_pmc_doi_ctgov_curated_and_never_a_search(identifiers, expected):
    assert reference_url(**identifiers) == expected


@pytest.mark.parametrize(
    ("url", "direct"),
    [
        ("https://pubmed.ncbi.nlm.nih.gov/35657320/", True),
        ("https://www.acc.org/guidelines", True),
        ("https://scholar.google.com/scholar?q=ctDNA", False),
        ("https://www.bing.com/search?q=ctdna", False),
        ("https://duckduckgo.com/?q=ctdna", False),
        ("https://clinicaltrials.gov/search?cond=colon+cancer", False),
        ("javascript:alert(1)", False),
        ("ftp://example.org/paper.pdf", False),
    ],
)
def test_search_engine_and_search_result_urls_are_not_direct(url, direct):
    assert is_direct_url(url) is direct


def test_quality_badges_use_library_kind_first_then_strongest_publication_type():
    assert quality_badges(kind="guideline", publication_types=["Randomized Controlled Trial"], strength="high") == [
        "Guideline",
        "High strength",
    ]
    assert quality_badges(
        publication_types=["Journal Article", "Multicenter Study", "Randomized Controlled Trial"]
    ) == ["RCT"]
    assert quality_badges(publication_types=["Journal Article"]) == []


def test_reference_carries_identifiers_direct_url_authors_journal_year_and_badges():
    source = EvidenceSource(
        doc_id="pmid:34449189",
        chunk_id="key_finding",
        origin="library",
        title="Empagliflozin in Heart Failure with a Preserved Ejection Fraction",
        pmid="34449189",
        doi="10.1056/NEJMoa2107038",
        nct="NCT03057951",
        authors_short="Anker SD et al.",
        journal="N Engl J Med",
        year=2021,
        kind="trial",
        strength="high",
        study_name="EMPEROR-Preserved",
    )
    assert format_reference(source, origins=["retrieved", "library"]) == {
        "pmid": "34449189",
        "doi": "10.1056/NEJMoa2107038",
        "nct": "NCT03057951",
        "url": "https://pubmed.ncbi.nlm.nih.gov/34449189/",
        "title": "Empagliflozin in Heart Failure with a Preserved Ejection Fraction",
        "authors": "Anker SD et al.",
        "journal": "N Engl J Med",
        "year": 2021,
        "study_name": "EMPEROR-Preserved",
        "source_badge": "PubMed",
        "quality_badges": ["Gold Standard", "Landmark Trial"],
        # No level of evidence stored: the type, the library it came from first, its best quality badge.
        "badges": ["Trial", "Curated library", "Landmark Trial"],
        "retracted": False,
    }


def test_reference_carries_its_level_of_evidence_and_says_when_it_was_inferred():
    source = EvidenceSource(
        doc_id="pmid:99000020", chunk_id="c0", origin="retrieved", title="Does X help Y?", pmid="99000020",
        evidence_level="rct", evidence_level_inferred=True,
    )
    reference = format_reference(source)
    assert {key: reference[key] for key in reference if "level" in key or key == "retracted"} == {
        "evidence_level": "rct",
        "evidence_level_label": "Randomised controlled trial",
        "evidence_level_inferred": True,
        "level_badge": "RCT (inferred)",
        "retracted": False,
    }


def test_reference_of_an_abstract_lists_first_author_et_al():
    source = EvidenceSource(
        doc_id="pmid:31070691",
        chunk_id="31070691:0",
        origin="retrieved",
        title="Analysis of Plasma Cell-Free DNA by Ultradeep Sequencing in Patients With Stages I to III "
        "Colorectal Cancer",
        pmid="31070691",
        authors=("Reinert T", "Henriksen TV", "Christensen E", "Sharma S"),
        journal="JAMA Oncol",
        year=2019,
        publication_types=("Journal Article", "Multicenter Study"),
    )
    reference = format_reference(source)
    assert reference["authors"] == "Reinert T et al."
    assert reference["badges"] == ["Multicenter study", "PubMed abstract"]
    assert reference["quality_badges"] == []  # not recent, no stored strength or citation count
    assert "doi" not in reference and "nct" not in reference


@pytest.mark.parametrize(
    ("fields", "source_badge", "quality"),
    [
        (
            {"kind": "guideline", "strength": "high", "anchor": True, "year": 2024, "origin": "library"},
            "Guideline",
            ["Recent", "Practical Guidance", "Anchor Guideline"],
        ),
        (
            {"kind": "guideline", "strength": "moderate", "year": 2018, "origin": "library"},
            "Guideline",
            ["Practical Guidance"],
        ),
        (
            {"kind": "trial", "strength": "high", "year": 2021, "origin": "library", "citation_count": 900},
            "PubMed",
            ["Gold Standard", "Highly Cited", "Landmark Trial"],
        ),
        ({"publication_types": ("Meta-Analysis",), "origin": "retrieved", "year": 2010}, "Meta-Analysis", []),
        ({"journal": "Cochrane Database Syst Rev", "origin": "retrieved", "year": 2012}, "Cochrane", []),
        ({"publication_types": ("Systematic Review",), "origin": "retrieved", "year": 2012}, "Systematic Review", []),
        ({"pmid": "", "nct": "NCT03057951", "origin": "tool", "year": 2012}, "Clinical Trial", []),
        ({"pmid": "", "pmcid": "PMC9701133", "origin": "tool", "year": 2012}, "PMC", []),
    ],
)
def test_source_and_quality_badges_come_from_stored_data(fields, source_badge, quality):
    from evidence.references import evidence_quality_badges
    from evidence.references import source_badge as badge_for

    values = {"doc_id": "pmid:1", "chunk_id": "x", "origin": "library", "pmid": "1", **fields}
    source = EvidenceSource(**values)
    assert badge_for(source) == source_badge
    assert evidence_quality_badges(source, today_year=2025) == quality


def test_library_reference_keeps_the_curated_url_exactly_and_a_reference_without_a_direct_url_is_dropped():
    guideline = EvidenceSource(
        doc_id="pmid:39210723",
        chunk_id="key_finding",
        origin="library",
        pmid="39210723",
        kind="guideline",
        url="https://www.escardio.org/Guidelines/Clinical-Practice-Guidelines/Atrial-Fibrillation",
    )
    assert format_reference(guideline)["url"] == guideline.url
    searchy = EvidenceSource(
        doc_id="pmid:39210723",
        chunk_id="key_finding",
        origin="library",
        pmid="39210723",
        url="https://www.google.com/search?q=ESC+AF+guideline",
    )
    assert format_reference(searchy)["url"] == "https://pubmed.ncbi.nlm.nih.gov/39210723/"


def test_reference_of_a_paper_under_an_expression_of_concern_says_so():
    source = EvidenceSource(
        doc_id="pmid:99000004", chunk_id="c0", origin="retrieved", title="Statin use and stroke", pmid="99000004",
        evidence_level="cohort", expression_of_concern=True,
    )
    reference = format_reference(source)
    assert (reference["expression_of_concern"], reference["retracted"], reference["level_badge"]) == (
        True, False, "Cohort / case-control"
    )
    assert "expression_of_concern" not in format_reference(replace(source, expression_of_concern=False))


@pytest.mark.parametrize(
    ("study_type", "origins", "quality", "shown"),
    [
        # The level of evidence is shown ("RCT"): two more at most, none repeating it.
        ("", ["Curated library"], ["Gold Standard", "Landmark Trial"], ["Curated library", "Landmark Trial"]),
        # No level: the type, where it came from, the best quality badge.
        ("Guideline", ["Live search"], ["Practical Guidance", "Recent"], ["Guideline", "Live search", "Recent"]),
        # "PubMed" is where the link lands, not a type; repeats in other letter case are one badge.
        ("PubMed", ["PubMed abstract", "Live search"], [], ["PubMed abstract"]),
        ("Meta-analysis", ["Meta-Analysis"], [], ["Meta-analysis"]),
    ],
)
def test_a_reference_shows_at_most_three_badges_and_none_twice(study_type, origins, quality, shown):
    from evidence.references import shown_badges

    assert shown_badges(study_type=study_type, origins=origins, quality=quality) == shown
