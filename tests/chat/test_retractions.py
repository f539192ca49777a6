"""A retracted paper never supports an answer: stored abstracts, library studies and tool results alike;
levels of evidence on every reference and as the tie-breaker of the ranking."""

from __future__ import annotations

from pathlib import Path

import pytest

from chat.pipeline import answer_question
from chat.tools import get_pubmed_article
from evidence.models import IdentifierCheck, Study
from evidence.sources import ORIGIN_RETRIEVED, EvidenceSet, EvidenceSource

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "efetch_retractions.xml"
QUESTION = "Does colchicine reduce cardiovascular events after myocardial infarction?"


@pytest.fixture
def colchicine_abstracts(db) -> list[str]:
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    return abstracts_upsert(records=parse_pubmed_xml(FIXTURE.read_bytes()), embed=True).pmids


def _step(result, name):
    return next(step for step in result.trace if step["step"] == name)


def test_retracted_abstract_is_excluded_from_the_answer_and_named_in_the_trace(library, colchicine_abstracts):
    result = answer_question(question=QUESTION)
    cited = [reference.get("pmid") for reference in result.references]
    assert "99000001" not in cited
    assert "99000001" not in result.answer and "77 percent" not in result.answer
    note = _step(result, "retractions")
    assert note["detail"] == (
        "1 retracted abstract was excluded: PMID 99000001 (Colchicine after myocardial infarction: "
        "a randomised controlled trial of cardiovascular events.). 1 retraction notice was excluded: PMID 99000003 "
        "(Retraction notice: Colchicine after myocardial infarction.)"
    )
    assert note["data"]["excluded"][0]["pmid"] == "99000001"
    # The meta-analysis answers instead, with its level on the reference.
    assert cited == ["99000005"]
    (reference,) = result.references
    assert (reference["evidence_level"], reference["level_badge"], reference["retracted"]) == (
        "systematic_review", "Systematic review / MA", False
    )
    assert "25 percent" in result.answer


def test_library_study_found_retracted_by_its_identifier_check_is_left_out(library):
    question = (
        "Should a patient with atrial fibrillation and stage 4 chronic kidney disease receive oral anticoagulation?"
    )
    kdigo = Study.objects.get(pmid="29522134")
    IdentifierCheck.objects.create(
        study=kdigo, status=IdentifierCheck.Status.MATCH, pmid=kdigo.pmid, retracted=True,
        notices=[{"type": "RetractionIn", "pmid": "99000040", "source": "", "note": ""}],
    )
    result = answer_question(question=question)
    # KDIGO 2024 is cited for its recommendation on anticoagulation in AF with CKD G1-G4 (a curated finding).
    assert sorted(reference["pmid"] for reference in result.references) == ["38033089", "38490803", "39210723"]
    assert _step(result, "retractions")["detail"] == (
        f"1 retracted abstract was excluded: PMID 29522134 ({kdigo.study_name})"
    )
    guideline = next(r for r in result.references if r["pmid"] == "38033089")
    assert (guideline["evidence_level"], guideline["evidence_level_inferred"], guideline["level_badge"]) == (
        "guideline", False, "Guideline"
    )


def test_tool_refuses_a_retracted_article_as_evidence(colchicine_abstracts):
    output = get_pubmed_article(pmid="99000001")
    assert output.sources == []
    assert output.content.splitlines()[1] == (
        "RETRACTED: PubMed marks this article retracted; it is not evidence and cannot be cited."
    )
    assert [source.evidence_level for source in get_pubmed_article(pmid="99000005").sources] == ["systematic_review"]


def test_evidence_set_never_makes_a_retracted_source_citable():
    retracted = EvidenceSource(doc_id="pmid:99000001", chunk_id="c0", origin=ORIGIN_RETRIEVED, pmid="99000001",
                               retracted=True)
    evidence = EvidenceSet([retracted], library=[retracted])
    assert (len(evidence), evidence.known("pmid", "99000001"), evidence.library) == (0, False, [])
