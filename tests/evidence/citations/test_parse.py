import pytest

from evidence.citations.parse import extract_mentions
from tests.evidence.citations.sources import evidence

# --- extraction of every marker variant ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "form", "doc_id"),
    [
        ("Claim [citation:pmid:35657320:key_finding].", "citation", "pmid:35657320"),
        ("Claim [citation: pmid:31070691:31070691:0].", "citation", "pmid:31070691"),
        ("Claim [citation:pmid:35657320].", "citation", "pmid:35657320"),
        ("Claim [citation:doi:10.1056/nejmoa2200075:key_finding].", "citation", "pmid:35657320"),
        ("Claim [citation:2].", "citation", "pmid:31070691"),
        ("Claim [1].", "number", "pmid:35657320"),
        ("Claim (PMID: 35657320).", "pmid", "pmid:35657320"),
        ("Claim PMID 31070691 shows it.", "pmid", "pmid:31070691"),
        ("Claim (PubMed ID: 27384348).", "pmid", "pmid:27384348"),
        ("Claim (35657320).", "pmid", "pmid:35657320"),
        ("See https://pubmed.ncbi.nlm.nih.gov/35657320/ for details.", "pmid", "pmid:35657320"),
        ("Claim (doi:10.1056/NEJMoa2200075).", "doi", "pmid:35657320"),
        ("See https://doi.org/10.1126/scitranslmed.aaf6219.", "doi", "pmid:27384348"),
        ("Claim 10.1056/NEJMOA2200075 here.", "doi", "pmid:35657320"),
        ("Trial NCT03057951 showed it.", "nct", "pmid:34449189"),
        ("Trial https://clinicaltrials.gov/study/NCT03619213 showed it.", "nct", "pmid:36027570"),
        ("Full text PMC9701133.", "pmcid", "pmid:35657320"),
    ],
)
def test_every_marker_variant_maps_back_to_its_source(text, form, doc_id):
    mentions = extract_mentions(text, evidence())
    assert [(mention.form, mention.source.doc_id if mention.source else None) for mention in mentions] == [
        (form, doc_id)
    ]


def test_numbered_ranges_and_lists_map_to_the_available_sources_numbering():
    mentions = extract_mentions("Claims [1-3] and [1, 3].", evidence())
    assert [mention.source.doc_id for mention in mentions] == [
        "pmid:35657320",
        "pmid:31070691",
        "pmid:27384348",
        "pmid:35657320",
        "pmid:27384348",
    ]


def test_several_pmids_after_one_label_are_each_resolved():
    mentions = extract_mentions("Shown before (PMIDs 35657320, 31070691 and 99999999).", evidence())
    assert [(mention.value, mention.source is not None) for mention in mentions] == [
        ("35657320", True),
        ("31070691", True),
        ("99999999", False),
    ]


def test_doi_trailing_punctuation_and_unbalanced_parenthesis_are_not_part_of_it():
    mentions = extract_mentions("(see doi:10.1126/scitranslmed.aaf6219).", evidence())
    assert [mention.value for mention in mentions] == ["10.1126/scitranslmed.aaf6219"]


# --- verification -------------------------------------------------------------------------------
