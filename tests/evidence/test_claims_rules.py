"""Claim rules without a model: numbers across formats, negation and direction, study names, claim splitting."""

from __future__ import annotations

import pytest

from evidence.claims import (
    citation_markers,
    dangling_fragments,
    missing_numbers,
    numbers_in,
    polarity_conflict,
    remove_dangling,
    split_claims,
    study_names,
)

ISSUE_ANSWER = (
    "Circulating tumour DNA after surgery identifies patients at high risk of recurrence [1]. "
    "A large randomized trial showed a 40% reduction in recurrence with ctDNA-guided therapy. "
    "The COSMOS study and the GALAXY cohort confirmed these findings in every stage [2]. "
    "See also for a meta-analysis."
)


@pytest.mark.parametrize(
    ("claim", "source", "stated"),
    [
        ("a risk of 0.5", "a risk of 50%", True),
        ("50% responded", "the response rate was 0.50", True),
        ("50 per cent responded", "50% responded", True),
        ("five patients relapsed", "5 patients relapsed", True),
        ("1,000 participants", "1000 participants", True),
        ("P < .05", "p<0.05", True),
        ("HR 0.62 (95% CI 0.50 to 0.77)", "HR 0.62; 95% CI 0.50\u20130.77", True),
        ("10 mg daily for 12 weeks", "10mg once daily over twelve weeks", True),
        ("stage II colon cancer", "stage 2 colon cancer", True),
        ("a 40% reduction", "a 30% reduction", False),
        ("HR 0.62", "HR 0.65", False),
        ("stage III disease", "stage II disease", False),
        ("P = .03", "P = .3", False),
        ("24 months", "two years", False),  # unit conversion is not attempted: the quote must state it
        # A percentage needs a percentage or a proportion: a count of 40 does not state "40%".
        ("a 40% reduction in recurrence", "35 of 40 patients cleared ctDNA", False),
        ("a 40% reduction", "risk fell by 0.40", True),
        ("40 patients", "40% of patients", True),
    ],
)
def test_numbers_match_across_formats_only_when_equal(claim: str, source: str, stated: bool) -> None:
    assert (missing_numbers(claim, source) == []) is stated


def test_numbers_skip_markers_and_identifiers_glued_to_letters() -> None:
    text = "In MERMAID-1 and IMpower010, HER2 HR 0.62 (95% CI 0.50\u20130.77) [1] [citation:pmid:35657320:0]"
    found = numbers_in(text)
    assert [(n.text, n.value, n.percent) for n in found] == [
        ("0.62", 0.62, False), ("95%", 95.0, True), ("0.50", 0.5, False), ("0.77", 0.77, False),
    ]


@pytest.mark.parametrize(
    ("claim", "source", "conflict"),
    [
        ("Aspirin reduced stroke.", "Aspirin lowered the rate of stroke.", ""),
        ("Aspirin reduced stroke.", "Aspirin increased the rate of stroke.",
         "the claim says it decreased but the cited text says it increased"),
        ("Mortality was higher with drug A.", "Mortality decreased with drug A.",
         "the claim says it increased but the cited text says it decreased"),
        ("Drug A did not reduce mortality.", "Drug A reduced mortality by 20%.",
         "the claim states a negative finding (no effect or difference) but the cited text reports one"),
        ("Drug A reduced mortality.", "There was no significant difference in mortality.",
         "the claim states a positive finding but the cited text reports no effect or difference"),
        ("Drug B was not non-inferior to warfarin.", "Drug B was non-inferior to warfarin.",
         "the claim states a negative finding (no effect or difference) but the cited text reports one"),
        ("Drug B was non-inferior to warfarin.", "Drug B failed to show non-inferiority to warfarin.",
         "the claim states a positive finding but the cited text reports no effect or difference"),
        ("Drug C had no effect on survival.", "Survival was not different between groups.", ""),
        ("Benefit was seen not only in men.", "Benefit was seen in men and women.", ""),
        # A ratio measure gives the direction when no word does.
        ("Detectable ctDNA lowered the risk of recurrence.", "Detectable ctDNA: recurrence 79% (hazard ratio 18).",
         "the claim says it decreased but the cited text says it increased"),
        ("Atezolizumab raised the risk of recurrence.", "Disease-free survival favoured atezolizumab (HR 0.64).",
         "the claim says it increased but the cited text says it decreased"),
        ("Detectable ctDNA increased the risk of recurrence.", "Recurrence with detectable ctDNA (HR 18).", ""),
    ],
)
def test_negation_and_direction_must_agree(claim: str, source: str, conflict: str) -> None:
    assert polarity_conflict(claim, source) == conflict


STUDY_NAMES = [
    "TRACERx", "CIRCULATE", "DYNAMIC", "BESPOKE", "COSMOS", "\u03b1-CORRECT", "GALAXY", "VEGA", "MERMAID-1",
    "c-TRAK", "monarchE", "IMpower010", "EMPEROR-Preserved", "KEYNOTE-189", "DELIVER",
]
NOT_STUDY_NAMES = [
    "KRAS", "HER2", "EGFR", "HR", "CI", "OR", "RR", "AF", "CKD", "eGFR", "HFpEF", "COPD", "NSCLC", "CAP", "MRD",
    "ctDNA", "mg", "mmHg", "Patients", "Aspirin", "Keytruda", "RESULTS", "ECOG", "COVID-19", "PD-L1", "QALYs",
    "HbA1c", "SF-36", "c-MET", "GRADE", "NYHA", "CD8", "mRNA",
]


@pytest.mark.parametrize("name", STUDY_NAMES)
def test_trial_acronyms_are_study_names(name: str) -> None:
    assert [(m.name, m.kind) for m in study_names(f"Results from {name} were reported.")] == [(name, "acronym")]


@pytest.mark.parametrize("word", NOT_STUDY_NAMES)
def test_abbreviations_genes_units_and_words_are_not_study_names(word: str) -> None:
    assert study_names(f"Results for {word} were reported in 2020.") == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Data from the Framingham Heart Study suggest this.", ["Framingham Heart Study"]),
        ("In the SPRINT trial, intensive control helped.", ["SPRINT"]),
        ("The Nurses' Health Study cohort was followed.", ["Nurses' Health Study"]),
        ("The pivotal phase III trial was positive.", []),
        ("The present study included 40 patients.", []),
        ("As in the DYNAMIC trial and the GALAXY cohort [2].", ["DYNAMIC", "GALAXY"]),
    ],
)
def test_the_x_trial_phrases_name_studies(text: str, names: list[str]) -> None:
    assert [m.name for m in study_names(text)] == names


def test_known_names_are_found_in_any_spacing() -> None:
    found = study_names("Survival in the nurses health study was long.", known_names=["Nurses Health Study"])
    assert [(m.name, m.kind) for m in found] == [("nurses health study", "known")]


def test_issue_answer_splits_into_claims_with_markers_and_a_dangling_pointer() -> None:
    claims = split_claims("## Answer\n" + ISSUE_ANSWER)
    assert [(c.plain, c.citations, c.dangling) for c in claims] == [
        ("Circulating tumour DNA after surgery identifies patients at high risk of recurrence.", ("1",), False),
        ("A large randomized trial showed a 40% reduction in recurrence with ctDNA-guided therapy.", (), False),
        ("The COSMOS study and the GALAXY cohort confirmed these findings in every stage.", ("2",), False),
        ("See also for a meta-analysis.", (), True),
    ]
    text = "## Answer\n" + ISSUE_ANSWER
    assert all(text[c.start : c.end] == c.text for c in claims)


def test_list_items_are_claims_and_headings_and_boilerplate_are_not() -> None:
    text = (
        "**Summary**\n"
        "- Aspirin lowered stroke risk [1, 2].\n"
        "2. Statins reduce events [citation:pmid:123:0]. They are cheap [3-4].\n"
        "I hope this helps!\n"
        "Key points:"
    )
    claims = split_claims(text)
    assert [(c.text, c.citations, c.kind) for c in claims] == [
        ("Aspirin lowered stroke risk [1, 2].", ("1", "2"), "list_item"),
        ("Statins reduce events [citation:pmid:123:0].", ("pmid:123:0",), "list_item"),
        ("They are cheap [3-4].", ("3", "4"), "list_item"),
    ]


def test_a_marker_after_the_full_stop_belongs_to_the_sentence_before() -> None:
    claims = split_claims("Aspirin lowered stroke risk. [1] Statins reduce events [2].")
    assert [(c.text, c.citations) for c in claims] == [
        ("Aspirin lowered stroke risk. [1]", ("1",)),
        ("Statins reduce events [2].", ("2",)),
    ]


def test_citation_markers_expand_ranges_and_lists() -> None:
    assert citation_markers("x [1-3] y [5, 7] z [citation:pmid:1:0, doi:10.1/x:2]") == (
        "1", "2", "3", "5", "7", "pmid:1:0", "doi:10.1/x:2",
    )


def test_dangling_fragments_are_found_and_removed() -> None:
    text = "Recurrence fell (PMID: ) in treated patients () and . See also for a meta-analysis.\nNext line stays."
    assert [f.kind for f in dangling_fragments(text)] == [
        "empty_identifier", "empty_brackets", "trailing_conjunction", "pointer_without_target",
    ]
    assert remove_dangling(text) == "Recurrence fell in treated patients.\nNext line stays."
