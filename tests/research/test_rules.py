"""Rule-based suggestions: PubMed syntax with vocabulary MeSH terms, ClinicalTrials.gov parameters, intents."""

from __future__ import annotations

from datetime import date

import pytest

from evidence.vocabulary import Vocabulary, VocabularyTerm
from research.payloads import check_payload
from research.registries import payload_type_get
from research.rules.intent import ANALYSE, COLUMN, SEARCH, classify_request
from research.rules.pubmed_query import build_pubmed_query
from research.rules.trial_search import build_trial_search

TODAY = date(2026, 11, 22)


def term(code: str, kind: str, label: str, synonyms: tuple[str, ...], mesh: tuple[str, ...], broader=None):
    return VocabularyTerm(
        code=code, kind=kind, label=label, synonyms=synonyms, mesh_terms=mesh, broader=broader, is_imaging_term=False
    )


VOCABULARY = Vocabulary.from_terms(
    [
        term("af", "disease", "atrial fibrillation", ("atrial fibrillation", "AF", "AFib"), ("Atrial Fibrillation",)),
        term(
            "ckd",
            "disease",
            "chronic kidney disease",
            ("chronic kidney disease", "CKD", "renal impairment"),
            ("Renal Insufficiency, Chronic",),
        ),
        term(
            "nsclc",
            "disease",
            "non-small cell lung cancer",
            ("non-small cell lung cancer", "NSCLC"),
            ("Carcinoma, Non-Small-Cell Lung",),
        ),
        term("stage_iv", "disease", "stage IV", ("stage IV", "stage 4", "metastatic"), ("Neoplasm Metastasis",)),
        term("breast", "disease", "breast cancer", ("breast cancer",), ("Breast Neoplasms",)),
        term(
            "anticoagulation",
            "decision",
            "anticoagulation",
            ("anticoagulation", "anticoagulant", "DOAC"),
            ("Anticoagulants",),
        ),
        term("therapy", "decision", "treatment", ("treatment", "treat", "therapy"), ("Therapeutics",)),
    ]
)


@pytest.mark.parametrize(
    ("request_text", "query", "explanation"),
    [
        (
            "Find RCTs of apixaban in atrial fibrillation with CKD since 2019",
            '("atrial fibrillation"[Title/Abstract] OR "Atrial Fibrillation"[MeSH Terms]) AND ("CKD"[Title/Abstract] '
            'OR "chronic kidney disease"[Title/Abstract] OR "Renal Insufficiency, Chronic"[MeSH Terms]) AND '
            '"apixaban"[Title/Abstract] AND "Randomized Controlled Trial"[Publication Type] AND '
            '("2019"[Date - Publication] : "3000"[Date - Publication])',
            "Searches PubMed for MeSH terms from MedCite's tag vocabulary (Atrial Fibrillation, Renal Insufficiency, "
            "Chronic) with their synonyms and the words 'apixaban' in titles and abstracts, limited to RCTs, "
            "published 2019 or later.",
        ),
        (
            "meta-analyses of DOAC treatment in AF published between 2015 and 2020",
            '("DOAC"[Title/Abstract] OR "anticoagulation"[Title/Abstract] OR "Anticoagulants"[MeSH Terms]) AND '
            '("AF"[Title/Abstract] OR "atrial fibrillation"[Title/Abstract] OR "Atrial Fibrillation"[MeSH Terms]) '
            'AND "Meta-Analysis"[Publication Type] AND ("2015"[Date - Publication] : "2020"[Date - Publication])',
            "Searches PubMed for MeSH terms from MedCite's tag vocabulary (Anticoagulants, Atrial Fibrillation) with "
            "their synonyms, limited to meta-analyses, published 2015-2020.",
        ),
        (
            "papers about left atrial appendage occlusion from the last 5 years",
            '"left atrial appendage occlusion"[Title/Abstract] AND '
            '("2022"[Date - Publication] : "3000"[Date - Publication])',
            "Searches PubMed for the words 'left atrial appendage occlusion' in titles and abstracts, published 2022 "
            "or later.",
        ),
        (
            "Build a query for metformin and breast cancer: systematic reviews or guidelines",
            '("breast cancer"[Title/Abstract] OR "Breast Neoplasms"[MeSH Terms]) AND "metformin"[Title/Abstract] AND '
            '("Systematic Review"[Publication Type] OR "Guideline"[Publication Type])',
            "Searches PubMed for MeSH terms from MedCite's tag vocabulary (Breast Neoplasms) with their synonyms and "
            "the words 'metformin' in titles and abstracts, limited to systematic reviews or guidelines.",
        ),
    ],
)
def test_pubmed_query_uses_vocabulary_mesh_free_words_types_and_dates(request_text, query, explanation) -> None:
    data = build_pubmed_query(text=request_text, vocabulary=VOCABULARY, today=TODAY)

    assert data == {"query": query, "explanation": explanation}
    assert check_payload(payload_type_get("pubmed_query_suggestion"), data) == data


@pytest.mark.parametrize("request_text", ["hello", "what should I do?", "thanks, that helps", ""])
def test_pubmed_query_is_none_when_nothing_names_a_topic(request_text: str) -> None:
    assert build_pubmed_query(text=request_text, vocabulary=VOCABULARY, today=TODAY) is None


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "phase 3 NSCLC trials that are recruiting",
            {
                "condition": "non-small cell lung cancer",
                "phase": ["PHASE3"],
                "status": ["RECRUITING"],
                "explanation": "Searches ClinicalTrials.gov for phase 3 trials in non-small cell lung cancer that are "
                "recruiting.",
            },
        ),
        (
            "phase 2/3 trials of pembrolizumab in melanoma sponsored by Merck Sharp & Dohme LLC",
            {
                "condition": "melanoma",
                "intervention": "pembrolizumab",
                "phase": ["PHASE2", "PHASE3"],
                "sponsor": "Merck Sharp & Dohme LLC",
                "explanation": "Searches ClinicalTrials.gov for phase 2/phase 3 trials of pembrolizumab in melanoma "
                "sponsored by Merck Sharp & Dohme LLC.",
            },
        ),
        (
            "early phase I studies testing osimertinib in metastatic NSCLC, not yet recruiting",
            {
                "condition": "non-small cell lung cancer",
                "intervention": "osimertinib",
                "phase": ["EARLY_PHASE1"],
                "status": ["NOT_YET_RECRUITING"],
                "explanation": "Searches ClinicalTrials.gov for early phase 1 trials of osimertinib in non-small cell "
                "lung cancer that are not yet recruiting.",
            },
        ),
        (
            "completed or terminated phase III trials in atrial fibrillation with CKD",
            {
                "condition": "atrial fibrillation AND chronic kidney disease",
                "phase": ["PHASE3"],
                "status": ["COMPLETED", "TERMINATED"],
                "explanation": "Searches ClinicalTrials.gov for phase 3 trials in atrial fibrillation AND chronic "
                "kidney disease that are completed or terminated.",
            },
        ),
        (
            "Find recruiting trials for Phelan-McDermid syndrome",
            {
                "condition": "Phelan-McDermid syndrome",
                "status": ["RECRUITING"],
                "explanation": (
                    "Searches ClinicalTrials.gov for trials in Phelan-McDermid syndrome that are recruiting."
                ),
            },
        ),
        (
            "phase 3 NSCLC immunotherapy trials",
            {
                "condition": "non-small cell lung cancer",
                "intervention": "immunotherapy",
                "phase": ["PHASE3"],
                "explanation": "Searches ClinicalTrials.gov for phase 3 trials of immunotherapy in non-small cell lung "
                "cancer.",
            },
        ),
        (
            "recruiting anticoagulant trials in AF",
            {
                "condition": "atrial fibrillation",
                "intervention": "anticoagulant",
                "status": ["RECRUITING"],
                "explanation": "Searches ClinicalTrials.gov for trials of anticoagulant in atrial fibrillation that "
                "are recruiting.",
            },
        ),
        (
            "phase 2 trials of pembrolizumab in elderly NSCLC patients",
            {
                "condition": "non-small cell lung cancer",
                "intervention": "pembrolizumab",
                "term": "elderly",
                "phase": ["PHASE2"],
                "explanation": "Searches ClinicalTrials.gov for phase 2 trials of pembrolizumab in non-small cell lung "
                "cancer mentioning elderly.",
            },
        ),
        (
            "phase 3 NSCLC therapy trials",
            {
                "condition": "non-small cell lung cancer",
                "phase": ["PHASE3"],
                "explanation": "Searches ClinicalTrials.gov for phase 3 trials in non-small cell lung cancer.",
            },
        ),
        (
            "active, not recruiting phase 4 trials",
            {
                "phase": ["PHASE4"],
                "status": ["ACTIVE_NOT_RECRUITING"],
                "explanation": "Searches ClinicalTrials.gov for phase 4 trials that are active, not recruiting.",
            },
        ),
    ],
)
def test_trial_search_parameters_are_parsed_from_a_phrase(request_text: str, expected: dict) -> None:
    data = build_trial_search(text=request_text, vocabulary=VOCABULARY)

    assert data == expected
    assert check_payload(payload_type_get("trial_search_suggestion"), data) == expected


def test_accepting_a_rule_built_trial_search_keeps_the_intervention_and_other_terms() -> None:
    from research.pages.trialscout import search_url

    data = build_trial_search(text="phase 3 NSCLC immunotherapy trials in elderly patients", vocabulary=VOCABULARY)

    assert data is not None
    assert search_url(data) == (
        "/trialscout/?condition=non-small+cell+lung+cancer&intervention=immunotherapy&q=elderly&phase=PHASE3"
    )


@pytest.mark.parametrize("request_text", ["hello", "thanks!", "what does this mean?"])
def test_trial_search_is_none_without_anything_to_search_for(request_text: str) -> None:
    assert build_trial_search(text=request_text, vocabulary=VOCABULARY) is None


@pytest.mark.parametrize(
    ("text", "has_items", "intent"),
    [
        ("Find phase 3 melanoma trials", True, SEARCH),
        ("search for apixaban RCTs", True, SEARCH),
        ("which of these are recruiting?", True, ANALYSE),
        ("how many RCTs are in the table?", True, ANALYSE),
        ("find the ones among these that are phase 3", True, ANALYSE),
        ("add a column that flags RCTs", True, COLUMN),
        ("mark which trials enrol children", True, COLUMN),
        ("what do these say about bleeding?", False, SEARCH),
        ("How many of the loaded articles are about breast cancer?", False, ANALYSE),
        ("Which of these are RCTs?", False, ANALYSE),
        ("what do these say about bleeding?", True, ANALYSE),
        ("phase 3 melanoma trials that are recruiting", True, SEARCH),
        ("Give me an overview of the phases", True, ANALYSE),
        ("Are any of them recruiting?", True, ANALYSE),
        ("Which are recruiting", True, ANALYSE),
    ],
)
def test_requests_are_classified(text: str, has_items: bool, intent: str) -> None:
    assert classify_request(text=text, has_items=has_items) == intent
