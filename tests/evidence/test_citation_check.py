"""The citation checker: each sentence of a text judged against the stored text of what it cites."""

from __future__ import annotations

import pytest

from evidence.citations.parse import malformed_identifiers
from evidence.claims import PassageText, Quote, verbatim_quote
from evidence.services.citation_check import (
    CHECK_MAX_CHARS,
    CitationCheckInputError,
    check_citation_text,
    citations_check,
    status_for_verdict,
)
from pubmed.models import Abstract
from tests.evidence.checker import (
    CORONAVIRUS,
    CORONAVIRUS_QUOTED,
    NOT_FOUND,
    QUOTED,
    SUPPORTED,
    TRAMETINIB,
    UNCITED,
    UNKNOWN,
    UNRELATED,
    stored_trametinib,  # noqa: F401  (fixture)
)
from tests.evidence.factories import StudyFactory
from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    FakeEutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)
from tests.trials.factories import TrialFactory

pytestmark = pytest.mark.django_db


def statuses(text: str) -> list[str]:
    return [sentence.status for sentence in citations_check(text=text).sentences]


def test_sentences_on_a_stored_abstract_are_judged_without_asking_pubmed(
    stored_trametinib: Abstract, fake_eutils: FakeEutils  # noqa: F811
) -> None:
    fake_eutils.serve()
    check = citations_check(text=f"{SUPPORTED} {UNRELATED}\n\n{UNCITED}")
    supported, unrelated, uncited = check.sentences
    assert [s.status for s in check.sentences] == ["supported", "not_supported", "no_citation"]
    assert supported.text == SUPPORTED
    assert [(i.kind, i.value, i.label, i.url, i.found) for i in supported.identifiers] == [
        ("pmid", TRAMETINIB, f"PMID {TRAMETINIB}", f"https://pubmed.ncbi.nlm.nih.gov/{TRAMETINIB}/", True)
    ]
    assert supported.identifiers[0].title == "Improved survival with MEK inhibition in BRAF-mutated melanoma."
    assert [(q.identifier, q.text) for q in supported.quotes] == [(f"PMID {TRAMETINIB}", QUOTED + ".")]
    assert unrelated.quotes == [] and unrelated.reason
    assert uncited.identifiers == [] and uncited.score is None
    assert uncited.reason == "This sentence cites no PMID, DOI or NCT number, so it was not checked."
    assert check.counts["supported"] == 1 and check.counts["no_citation"] == 1
    assert fake_eutils.requests("/efetch.fcgi") == []


def test_a_missing_pmid_is_fetched_once_stored_and_read_locally_next_time(fake_eutils: FakeEutils) -> None:  # noqa: F811
    fake_eutils.serve()
    text = f"{CORONAVIRUS_QUOTED} [PMID: {CORONAVIRUS}]. {NOT_FOUND}"
    first = citations_check(text=text)
    assert [s.status for s in first.sentences] == ["supported", "identifier_not_found"]
    assert first.sentences[1].reason == f"PMID {UNKNOWN} is not found in PubMed or the library."
    assert first.sentences[1].identifiers[0].found is False
    assert Abstract.objects.filter(pmid=CORONAVIRUS).exists()
    assert not Abstract.objects.filter(pmid=UNKNOWN).exists()
    assert [seen.params["id"] for seen in fake_eutils.requests("/efetch.fcgi")] == [f"{CORONAVIRUS},{UNKNOWN}"]

    second = citations_check(text=text)
    assert [s.status for s in second.sentences] == ["supported", "identifier_not_found"]
    # Only the PMID NCBI does not know is asked about again; the stored one is read locally.
    assert [seen.params["id"] for seen in fake_eutils.requests("/efetch.fcgi")] == [f"{CORONAVIRUS},{UNKNOWN}", UNKNOWN]


def test_pubmed_unreachable_is_not_reported_as_a_missing_identifier(fake_eutils: FakeEutils) -> None:  # noqa: F811
    fake_eutils.respond("/efetch.fcgi", "Service unavailable", status=503, content_type="text/plain")
    (sentence,) = citations_check(text=f"{CORONAVIRUS_QUOTED} (PMID {CORONAVIRUS}).").sentences
    assert sentence.status == "source_unavailable"
    assert sentence.reason == f"PMID {CORONAVIRUS} could not be fetched from PubMed; try again later."
    assert (sentence.identifiers[0].found, sentence.identifiers[0].available) == (False, False)


def test_one_missing_identifier_marks_the_sentence_and_says_what_the_other_source_does(
    stored_trametinib: Abstract, fake_eutils: FakeEutils  # noqa: F811
) -> None:
    fake_eutils.serve()
    (sentence,) = citations_check(text=f"{QUOTED} (PMIDs {TRAMETINIB}, {UNKNOWN}).").sentences
    assert sentence.status == "identifier_not_found"
    assert sentence.reason.startswith(
        f"PMID {UNKNOWN} is not found in PubMed or the library. PMID {TRAMETINIB} supports the sentence"
    )
    assert [q.identifier for q in sentence.quotes] == [f"PMID {TRAMETINIB}"]


def test_dois_library_studies_and_cached_trials_are_sources_too(
    stored_trametinib: Abstract, fake_eutils: FakeEutils  # noqa: F811
) -> None:
    fake_eutils.serve()
    StudyFactory(pmid="", nct_number="NCT01245062", key_finding="Trametinib improved progression-free survival.")
    TrialFactory(nct_id="NCT02000001", brief_summary="This trial tests pembrolizumab in resected melanoma.")
    text = (
        f"{QUOTED} (doi:10.1056/NEJMoa1203421).\n"
        "Trametinib improved progression-free survival (NCT01245062).\n"
        "This trial tests pembrolizumab in resected melanoma (https://clinicaltrials.gov/study/NCT02000001).\n"
        "Nivolumab was tested in NCT09999999."
    )
    doi, library, trial, missing = citations_check(text=text).sentences
    assert [s.status for s in (doi, library, trial, missing)] == [
        "supported", "supported", "supported", "identifier_not_found"
    ]
    assert (doi.identifiers[0].label, doi.identifiers[0].url) == (
        "DOI 10.1056/NEJMoa1203421", "https://doi.org/10.1056/NEJMoa1203421"
    )
    assert [q.identifier for q in library.quotes] == ["NCT01245062"]
    assert trial.identifiers[0].url == "https://clinicaltrials.gov/study/NCT02000001"
    assert missing.reason == "NCT09999999 is not found among the stored ClinicalTrials.gov records or the library."


def test_an_identifier_written_after_the_full_stop_belongs_to_the_sentence_before(
    stored_trametinib: Abstract, fake_eutils: FakeEutils  # noqa: F811
) -> None:
    fake_eutils.serve()
    check = citations_check(text=f"{QUOTED}. PMID {TRAMETINIB}.\n{UNCITED}")
    assert [(s.text, s.status) for s in check.sentences] == [(f"{QUOTED}.", "supported"), (UNCITED, "no_citation")]


def test_a_retracted_source_is_named_in_the_reason(stored_trametinib: Abstract, fake_eutils: FakeEutils) -> None:  # noqa: F811
    fake_eutils.serve()
    Abstract.objects.filter(pmid=TRAMETINIB).update(is_retracted=True)
    (sentence,) = citations_check(text=SUPPORTED).sentences
    assert sentence.identifiers[0].retracted is True
    assert sentence.reason.startswith(f"PMID {TRAMETINIB} is retracted.")


@pytest.mark.parametrize(
    ("text", "code", "status", "message"),
    [
        ("", "empty_text", 400, "The text is empty: paste sentences that cite PMIDs, DOIs or NCT numbers."),
        (" \n\t\u200b", "empty_text", 400, "The text is empty: paste sentences that cite PMIDs, DOIs or NCT numbers."),
        ("Apixaban lowers stroke risk.", "no_identifiers", 400,
         "The text cites no PMID, DOI, NCT number or PMC id, so there is nothing to check; "
         "write them as e.g. PMID 35657320, doi:10.1056/NEJMoa2200075 or NCT03057951."),
        ("x" * (CHECK_MAX_CHARS + 1), "text_too_long", 413,
         "The text is 20,001 characters long; check at most 20,000 characters at a time."),
        ("Apixaban (PMID 1\x00).", "invalid", 400,
         "text contains a NUL character (\\x00), which MedCite cannot store or search; remove it."),
        (" ".join(f"PMID {30000000 + n}." for n in range(101)), "too_many_identifiers", 400,
         "The text cites 101 different identifiers; check at most 100 at a time."),
    ],
)
def test_text_that_cannot_be_checked_is_refused_with_what_to_change(
    text: str, code: str, status: int, message: str
) -> None:
    with pytest.raises(CitationCheckInputError) as refused:
        check_citation_text(text)
    assert (refused.value.code, refused.value.status, refused.value.message) == (code, status, message)


def test_malformed_identifiers_are_named() -> None:
    with pytest.raises(CitationCheckInputError) as refused:
        check_citation_text("Apixaban worked (NCT0123456) and so did rivaroxaban (PMID 0123; PMID 22663011).")
    assert refused.value.code == "malformed_identifier"
    assert refused.value.message.startswith("Not well-formed identifiers: PMID 0123, NCT0123456. ")


@pytest.mark.parametrize(
    ("text", "malformed"),
    [
        ("PMID 22663011, 31978945 and NCT01234567 (doi: 10.1056/NEJMoa1203421).", []),
        ("NCT 0123 4567 and [citation:pmid:22663011:0] and PMID 22663011 2012", []),
        ("NCT0123456 and NCT012345678", ["NCT0123456", "NCT012345678"]),
        ("PMID 1234567890", ["PMID 1234567890"]),
        ("doi: 10.105/abc", ["doi: 10.105/abc"]),
        ("PMIDs are useful.", []),
    ],
)
def test_malformed_identifier_table(text: str, malformed: list[str]) -> None:
    assert malformed_identifiers(text) == malformed


def test_text_with_identifiers_but_no_sentence_is_refused() -> None:
    with pytest.raises(CitationCheckInputError) as refused:
        citations_check(text=f"PMID {TRAMETINIB}")
    assert refused.value.code == "no_sentences"


@pytest.mark.parametrize(
    ("verdict", "status"),
    [("supported", "supported"), ("contradicted", "contradicted"), ("not_enough_info", "not_supported")],
)
def test_verifier_verdicts_map_to_checker_statuses(verdict: str, status: str) -> None:
    assert status_for_verdict(verdict) == status


def test_verbatim_quote_ignores_case_spacing_and_the_final_full_stop() -> None:
    passages = [PassageText("pmid:1", "0", "Other text."), PassageText("pmid:2", "abstract", "A  Drug\nhelped MANY.")]
    assert verbatim_quote("a drug helped many.", passages) == Quote("pmid:2", "abstract", "a drug helped many.")
    assert verbatim_quote("a drug helped few.", passages) is None
    assert verbatim_quote(" . ", passages) is None
