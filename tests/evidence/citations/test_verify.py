import logging
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence.citations.parse import identifiers_in
from evidence.citations.verify import DEFAULT_ABSTENTION, compute_confidence, verify_answer
from evidence.confidence import GREEN, RED, YELLOW
from evidence.sources import EvidenceSet, EvidenceSource
from tests.evidence.citations.sources import (
    ALLOWED,
    DYNAMIC,
    GALAXY,
    LIBRARY,
    UNAPPROVED,
    answer_text,
    events,
    evidence,
    words,
)


def test_known_identifiers_become_numbered_markers_in_order_of_first_use():
    result = verify_answer(
        text="Relapse was predicted (PMID: 31070691). De-escalation was safe [citation:pmid:35657320:key_finding]. "
        "Relapse again (doi:10.1056/NEJMoa2200075).",
        evidence=evidence(),
    )
    assert result.text == "Relapse was predicted [1]. De-escalation was safe [2]. Relapse again [2]."
    assert [(reference["n"], reference["pmid"]) for reference in result.references] == [
        (1, "31070691"),
        (2, "35657320"),
    ]
    assert result.removed == []


def test_unknown_pmid_is_removed_from_answer_and_logged(caplog):
    caplog.set_level(logging.INFO)
    result = verify_answer(
        text="DYNAMIC halved chemotherapy use (PMID: 35657320). A fabricated trial agreed (PMID: 12345678).",
        evidence=evidence(),
        intent="mrd",
    )
    assert result.text == "DYNAMIC halved chemotherapy use [1]. A fabricated trial agreed."
    assert "12345678" not in result.text
    assert result.removed == [{"form": "pmid", "value": "12345678"}]
    assert [
        (event["form"], event["identifier"], event["intent"]) for event in events(caplog, "citation_hallucinated")
    ] == [("pmid", "12345678", "mrd")]


@pytest.mark.parametrize(
    ("fabricated", "form"),
    [
        ("[citation:pmid:99999999:0]", "citation"),
        ("(doi:10.9999/fake.2024.001)", "doi"),
        ("https://doi.org/10.9999/fake.2024.001", "doi"),
        ("(NCT99999999)", "nct"),
        ("https://pubmed.ncbi.nlm.nih.gov/99999999/", "pmid"),
        ("[7]", "number"),
        ("(PMC1234567)", "pmcid"),
    ],
)
def test_fabricated_identifiers_of_every_form_never_survive(fabricated, form):
    result = verify_answer(
        text=f"The tumour shrank {fabricated}. Relapse was predicted (PMID 31070691).", evidence=evidence()
    )
    assert result.text == "The tumour shrank. Relapse was predicted [1]."
    assert [item["form"] for item in result.removed] == [form]


def test_library_identifier_not_retrieved_this_turn_is_still_valid():
    result = verify_answer(
        text="Empagliflozin helped in HFpEF (NCT03057951). Relapse was predicted [2].", evidence=evidence()
    )
    assert [reference["pmid"] for reference in result.references] == ["34449189", "31070691"]
    assert result.references[0]["source_badge"] == "PubMed"
    assert "Curated library" in result.references[0]["badges"]


def test_named_study_without_identifier_gets_its_verified_identifier(caplog):
    caplog.set_level(logging.INFO)
    result = verify_answer(
        text="The DYNAMIC trial reduced chemotherapy use. EMPEROR-Preserved lowered hospitalisation (PMID 31070691).",
        evidence=evidence(),
    )
    assert (
        result.text
        == "The DYNAMIC trial reduced chemotherapy use [1]. EMPEROR-Preserved lowered hospitalisation [2][3]."
    )
    assert [reference["pmid"] for reference in result.references] == ["35657320", "31070691", "34449189"]
    assert result.named_studies_attached == 2
    assert events(caplog, "citation_extraction_complete")[-1]["named_studies_attached"] == 2


def test_named_study_already_cited_in_its_sentence_is_not_cited_twice():
    result = verify_answer(text="DELIVER showed benefit (NCT03619213) in HFpEF overall.", evidence=evidence())
    assert result.text == "DELIVER showed benefit [1] in HFpEF overall."
    assert result.named_studies_attached == 0


def test_ordinary_word_in_lower_case_is_not_a_study_name():
    result = verify_answer(
        text="A dynamic risk model helps deliver care. Relapse was predicted (PMID 31070691).", evidence=evidence()
    )
    assert result.text == "A dynamic risk model helps deliver care. Relapse was predicted [1]."
    assert result.named_studies_attached == 0


def test_ambiguous_study_name_is_flagged_not_guessed(caplog):
    caplog.set_level(logging.INFO)
    result = verify_answer(text="GALAXY showed ctDNA predicts relapse (PMID 31070691).", evidence=evidence())
    assert result.flags == [
        {"type": "named_study_ambiguous", "name": "GALAXY", "candidates": ["pmid:33931919", "pmid:36646802"]}
    ]
    assert [reference["pmid"] for reference in result.references] == ["31070691"]
    assert events(caplog, "named_study_unverified")[0]["name"] == "GALAXY"


def test_ambiguous_study_name_resolves_to_the_one_retrieved_this_turn():
    galaxy_this_turn = EvidenceSource(
        **{**GALAXY.as_dict(), "approved": True, "names": GALAXY.names, "authors": (), "publication_types": ()}
    )
    result = verify_answer(text="GALAXY showed ctDNA predicts relapse.", evidence=evidence(galaxy_this_turn))
    assert result.text == "GALAXY showed ctDNA predicts relapse [1]."
    assert result.flags == []


def test_model_reference_list_is_replaced_by_verified_sources():
    result = verify_answer(
        text="De-escalation is reasonable.\n\n## References\n1. Tie J et al. PMID 35657320\n"
        "2. Invented. doi:10.9999/x.1",
        evidence=evidence(),
    )
    assert (
        result.text == "De-escalation is reasonable.\n\n**Sources**\n- [1] " + DYNAMIC.title + " (N Engl J Med, 2022)"
    )
    assert result.removed == [{"form": "doi", "value": "10.9999/x.1"}]
    assert result.was_repaired is False
    assert result.confidence == YELLOW


# --- repair and abstention ----------------------------------------------------------------------


def test_answer_without_citations_is_repaired_with_top_approved_sources(caplog):
    caplog.set_level(logging.INFO)
    result = verify_answer(
        text="ctDNA guides adjuvant therapy. It predicts relapse.",
        evidence=evidence(),
        intent="mrd",
        repair_max_sources=5,
    )
    assert result.was_repaired is True
    assert result.text.startswith("ctDNA guides adjuvant therapy. It predicts relapse.\n\n**Sources**\n- [1] ")
    assert [reference["pmid"] for reference in result.references] == ["35657320", "31070691", "27384348"]
    assert {citation["form"] for citation in result.citations} == {"repair"}
    assert result.confidence == YELLOW
    repair = events(caplog, "citation_repair")
    assert [(event["intent"], event["sources_attached"]) for event in repair] == [("mrd", 3)]
    complete = events(caplog, "citation_extraction_complete")[-1]
    assert {key: complete[key] for key in ("intent", "was_repaired", "confidence", "density", "valid_citations")} == {
        "intent": "mrd",
        "was_repaired": True,
        "confidence": "YELLOW",
        "density": 0.0,
        "valid_citations": 3,
    }


def test_repair_attaches_at_most_the_configured_number_of_sources():
    many = [
        EvidenceSource(
            doc_id=f"pmid:{40000000 + n}",
            chunk_id="0",
            origin="retrieved",
            pmid=str(40000000 + n),
            title=f"Abstract {n}",
            approved=True,
        )
        for n in range(8)
    ]
    result = verify_answer(text="An uncited answer about ctDNA.", evidence=evidence(*many), repair_max_sources=4)
    assert [reference["pmid"] for reference in result.references] == ["40000000", "40000001", "40000002", "40000003"]


def test_answer_without_citations_or_approved_evidence_abstains():
    result = verify_answer(text="Vitamin C cures colds (PMID 99999999).", evidence=evidence(UNAPPROVED))
    assert (result.text, result.confidence, result.abstained, result.references) == (DEFAULT_ABSTENTION, RED, True, [])


# --- confidence ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("citations", "density", "level"),
    [
        (0, 0.0, RED),
        (0, 1.0, RED),
        (1, 1.0, YELLOW),
        (2, 0.29, YELLOW),
        (2, 0.3, GREEN),
        (5, 0.8, GREEN),
        (1, 0.1, YELLOW),
    ],
)
def test_confidence_thresholds(citations, density, level):
    assert compute_confidence(citations=citations, density=density) == level


def test_density_counts_cited_sentences_over_sentences():
    result = verify_answer(
        text="First claim (PMID 35657320). Second claim is uncited here. Third claim (PMID 31070691). "
        "Fourth claim stands alone.",
        evidence=evidence(),
    )
    assert (result.sentences, result.cited_sentences, result.density, result.confidence) == (4, 2, 0.5, GREEN)


def _key(kind: str, value: str) -> tuple[str, str]:
    if kind == "doi":
        return kind, value.lower()
    return kind, value.upper() if kind in {"nct", "pmcid"} else value


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(text=answer_text)
def test_property_no_identifier_outside_the_evidence_survives_verification(text):
    result = verify_answer(text=text, evidence=evidence())
    for kind, value in identifiers_in(result.text):
        assert kind != "citation", value
        assert _key(kind, value) in ALLOWED, (kind, value, result.text)
    for number in re.findall(r"\[(\d+)\]", result.text):
        assert 1 <= int(number) <= len(result.references)
    for reference in result.references:
        for kind in ("pmid", "doi", "nct", "pmcid"):
            if kind in reference:
                assert _key(kind, reference[kind]) in ALLOWED
        assert reference["url"].startswith(
            (
                "https://pubmed.ncbi.nlm.nih.gov/",
                "https://doi.org/",
                "https://clinicaltrials.gov/",
                "https://pmc.ncbi.nlm.nih.gov/",
            )
        )
    assert {citation["doc_id"] for citation in result.citations} == {
        reference["doc_id"] for reference in result.references
    }


sources_strategy = st.lists(
    st.builds(
        lambda n, approved, origin: EvidenceSource(
            doc_id=f"pmid:{41000000 + n}",
            chunk_id=f"c{n}",
            origin=origin,
            pmid=str(41000000 + n),
            title=f"T{n}",
            approved=approved,
        ),
        st.integers(0, 30),
        st.booleans(),
        st.sampled_from(["library", "retrieved", "tool"]),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(text=st.lists(words, min_size=1, max_size=30).map(" ".join), sources=sources_strategy, limit=st.integers(3, 5))
def test_property_repair_never_invents_a_source(text, sources, limit):
    turn = EvidenceSet(sources, library=LIBRARY)
    approved = turn.approved()
    result = verify_answer(text=text, evidence=turn, repair_max_sources=limit)
    if approved:
        assert result.was_repaired and not result.abstained
        assert [reference["doc_id"] for reference in result.references] == [
            source.doc_id for source in approved[:limit]
        ]
    else:
        assert result.abstained and result.references == [] and result.confidence == RED


@settings(max_examples=200, deadline=None)
@given(text=answer_text)
def test_property_confidence_follows_the_thresholds(text):
    result = verify_answer(text=text, evidence=evidence())
    expected_density = round(result.cited_sentences / result.sentences, 3) if result.sentences else 0.0
    if result.abstained:
        assert result.confidence == RED
        return
    assert result.density == expected_density
    cited = len(result.references)
    if cited == 0:
        assert result.confidence == RED
    elif cited == 1 or result.density < 0.3:
        assert result.confidence == YELLOW
    else:
        assert result.confidence == GREEN
