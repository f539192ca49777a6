"""The extractive composer, on hand-built evidence (no database, no model)."""

import re
from dataclasses import replace

import pytest

from chat.answer_settings import AnswerSettings
from chat.prompts import ABSTENTION_NO_EVIDENCE
from chat.providers.composer import compose_answer, score_sentence
from evidence.abstract_sections import abstract_sentences
from evidence.citations.verify import verify_answer
from evidence.concepts import Concept, form_of
from evidence.findings import CuratedFinding
from evidence.sources import EvidenceSet, EvidenceSource
from evidence.text import content_terms

QUESTION = "Does trametinib improve survival in BRAF-mutated metastatic melanoma?"
TERMS = content_terms(QUESTION)
WEIGHTS = {term: 1.0 for term in TERMS}

LIBRARY = EvidenceSource(
    doc_id="pmid:11111111",
    chunk_id="key_finding",
    origin="library",
    title="A curated melanoma trial",
    pmid="11111111",
    text="Trametinib prolonged survival in BRAF-mutated melanoma.",
    study_name="METRIC",
    journal="N Engl J Med",
    year=2012,
    approved=True,
)
ABSTRACT = EvidenceSource(
    doc_id="pmid:22663011",
    chunk_id="c1",
    origin="retrieved",
    title="Improved survival with MEK inhibition",
    pmid="22663011",
    text=(
        "BACKGROUND: Melanoma with BRAF mutations is common in metastatic disease. "
        "RESULTS: Median progression-free survival was 4.8 months with trametinib and 1.5 months with chemotherapy. "
        "At 6 months, overall survival was 81% with trametinib and 67% with chemotherapy in metastatic melanoma. "
        "Median progression-free survival was 4.8 months with trametinib versus 1.5 months with chemotherapy "
        "in melanoma. "
        "CONCLUSIONS: Trametinib improved survival among patients with BRAF-mutated metastatic melanoma."
    ),
    approved=True,
)
UNAPPROVED = EvidenceSource(
    doc_id="pmid:28775130",
    chunk_id="c0",
    origin="retrieved",
    title="Pesticides",
    pmid="28775130",
    text="RESULTS: Pesticide exposure was associated with hypothyroidism in survival analyses.",
    approved=False,
)


def compose(*sources, **settings):
    return compose_answer(
        question=QUESTION,
        evidence=EvidenceSet(sources),
        settings=AnswerSettings(**settings),
        question_terms=TERMS,
        weights=WEIGHTS,
    )


def answer_to(question: str, text: str) -> str:
    """Return the composed answer to `question` from one approved abstract whose text is `text`."""
    source = EvidenceSource(
        doc_id="pmid:30000001", chunk_id="c0", origin="retrieved", title="T", pmid="30000001", text=text, approved=True
    )
    return compose_answer(
        question=question,
        evidence=EvidenceSet([source]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
    )


def test_bottom_line_leads_with_the_top_sources_conclusion_then_the_evidence_each_cited():
    text = compose(ABSTRACT, LIBRARY, UNAPPROVED)
    assert text.startswith(
        "**Bottom line:** Trametinib improved survival among patients with BRAF-mutated metastatic melanoma "
        "[citation:pmid:22663011:c1]."
    )
    headings = re.findall(r"^### (.+)$", text, flags=re.MULTILINE)
    assert headings == ["Evidence"]
    assert (
        "- **METRIC** (N Engl J Med, 2012): Trametinib prolonged survival in BRAF-mutated melanoma "
        "[citation:pmid:11111111:key_finding]." in text
    )
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert bullets and all(re.search(r"\[citation:pmid:\d+:[\w]+\][.!?]$", line) for line in bullets)
    assert "Pesticide" not in text


def test_background_and_methods_sentences_are_never_findings():
    background = score_sentence(
        sentence="Melanoma with BRAF mutations is common in metastatic disease.",
        section="background",
        question_terms=TERMS,
        weights=WEIGHTS,
    )
    methods = score_sentence(
        sentence="We conducted a population-based case-referent study of 25- to 74-year-old melanoma patients.",
        section="",
        question_terms=TERMS,
        weights=WEIGHTS,
    )
    conclusion = score_sentence(
        sentence="Trametinib improved survival among patients with BRAF-mutated metastatic melanoma.",
        section="conclusions",
        question_terms=TERMS,
        weights=WEIGHTS,
    )
    assert conclusion > 0 and background == 0 and methods == 0
    assert "Melanoma with BRAF mutations is common" not in compose(ABSTRACT, composer_sentences=6)


@pytest.mark.parametrize(
    ("section", "sentence", "finding"),
    [
        ("methods and results", "Trametinib prolonged median survival to 15.6 months in metastatic melanoma.", True),
        ("measurements and main results", "Survival was longer with trametinib in BRAF-mutated melanoma.", True),
        ("methods and results", "Patients with metastatic melanoma were enrolled at 12 centres.", False),
        ("materials and methods", "Trametinib was given to patients with metastatic melanoma.", False),
        ("background and purpose", "Trametinib may prolong survival in metastatic melanoma.", False),
    ],
)
def test_a_combined_results_label_holds_findings_but_not_its_methods_sentences(section, sentence, finding):
    score = score_sentence(sentence=sentence, section=section, question_terms=TERMS, weights=WEIGHTS)
    assert (score > 0) is finding


def test_redundant_sentences_are_dropped_and_sources_are_capped():
    text = compose(ABSTRACT, composer_sentences_per_source=5)
    assert text.count("Median progression-free survival was 4.8 months") == 1
    assert (
        len([line for line in compose(ABSTRACT, composer_sentences_per_source=2).splitlines() if line.startswith("- ")])
        == 2
    )


def concepts_for(*labels):
    return tuple(Concept(label, "topic", (form_of(label),), 1.0) for label in labels)


def test_it_names_in_clinical_words_what_the_evidence_does_not_cover():
    question = "Does trametinib improve survival in BRAF-mutated melanoma with brain metastases in pregnancy?"
    text = compose_answer(
        question=question,
        evidence=EvidenceSet([ABSTRACT]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
        concepts=concepts_for("trametinib", "melanoma", "brain metastases", "pregnancy"),
    )
    assert text.endswith(
        "### What the evidence does not cover\n\n"
        "The cited sources do not address brain metastases or pregnancy; weigh that part with clinical judgement."
    )


def test_the_not_covered_section_is_left_out_when_nothing_is_missing():
    text = compose_answer(
        question=QUESTION,
        evidence=EvidenceSet([ABSTRACT]),
        settings=AnswerSettings(),
        question_terms=TERMS,
        weights=WEIGHTS,
        concepts=concepts_for("trametinib", "melanoma", "survival"),
    )
    assert "does not cover" not in text and "do not address" not in text


@pytest.mark.parametrize(
    ("question", "text", "first", "unstated"),
    [
        (
            "What dose of apixaban in AF with CKD?",
            "RESULTS: Apixaban 2.5 mg twice daily was used in most patients with stage 4 CKD and AF. "
            "CONCLUSIONS: Apixaban was associated with less bleeding than warfarin in AF with CKD.",
            "Apixaban 2.5 mg twice daily",
            "",
        ),
        (
            # Nothing states what was asked: the answer says so first, then gives the nearest finding.
            "How long to treat cystitis with nitrofurantoin?",
            "RESULTS: Nitrofurantoin cured most cystitis episodes. "
            "CONCLUSIONS: Nitrofurantoin remains a good choice for cystitis in women.",
            "The cited evidence does not state a treatment duration. Nearest finding: Nitrofurantoin",
            "",
        ),
        (
            # Asked for a drug and a dose, only the drug is stated: the gap follows the finding.
            "Which anticoagulant and what dose in AF with CKD?",
            "RESULTS: Apixaban caused less bleeding than warfarin in AF with CKD. "
            "CONCLUSIONS: Apixaban is preferred in AF with CKD.",
            "Apixaban",
            " The cited evidence does not state a dose.",
        ),
        (
            "How long to treat cystitis with nitrofurantoin?",
            "RESULTS: A 5 day course of nitrofurantoin cured 88% of cystitis episodes. "
            "CONCLUSIONS: Nitrofurantoin remains a good choice for cystitis in women.",
            "A 5 day course of nitrofurantoin",
            "",
        ),
    ],
)
def test_a_requested_dose_or_duration_leads_only_when_a_source_states_it(question, text, first, unstated):
    lead = answer_to(question, text).split("\n\n")[0]
    assert lead.startswith(f"**Bottom line:** {first}")
    assert lead.endswith(f"[citation:pmid:30000001:c0].{unstated}")


def test_a_timing_stated_for_another_drug_does_not_answer_when_to_restart_this_one():
    from evidence.concepts import DECISION_ROLE, Concept

    question = "Restart apixaban after GI bleed - when?"
    text = (
        "RESULTS: Aspirin was restarted on the day haemostasis was confirmed in most patients with GI bleeding. "
        "CONCLUSIONS: Apixaban after GI bleeding was associated with fewer thromboembolic events."
    )
    source = EvidenceSource(
        doc_id="pmid:30000001", chunk_id="c0", origin="retrieved", title="T", pmid="30000001", text=text, approved=True
    )
    anticoagulation = Concept(
        "anticoagulation", DECISION_ROLE, (("apixaban",), ("anticoagulation",)), code="anticoagulation"
    )
    restart = Concept("restart", DECISION_ROLE, (("restart",), ("restarted",)), code="restart")
    answer = compose_answer(
        question=question,
        evidence=EvidenceSet([source]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
        concepts=[anticoagulation, restart],
    )
    assert answer.startswith("**Bottom line:** The cited evidence does not state the timing. Nearest finding: ")


def test_abstains_when_nothing_approved_and_verification_agrees():
    text = compose(UNAPPROVED)
    assert text == ABSTENTION_NO_EVIDENCE
    verified = verify_answer(text=text, evidence=EvidenceSet([UNAPPROVED]))
    assert (verified.abstained, verified.confidence) == (True, "RED")


def test_composed_answer_passes_verification_untouched():
    text = compose(LIBRARY, ABSTRACT)
    verified = verify_answer(text=text, evidence=EvidenceSet([LIBRARY, ABSTRACT]))
    assert verified.removed == [] and verified.was_repaired is False
    assert sorted(reference["pmid"] for reference in verified.references) == ["11111111", "22663011"]
    assert verified.confidence == "GREEN"


def test_inline_section_labels_are_recognised():
    assert abstract_sentences("Intro. RESULTS: HR 0.79. Fewer events. CONCLUSIONS: It works.") == [
        ("", "Intro."),
        ("results", "HR 0.79."),
        ("results", "Fewer events."),
        ("conclusions", "It works."),
    ]


def test_patient_details_are_context_never_a_gap():
    from evidence.concepts import CONDITION, POPULATION, TOPIC, Concept, form_of

    question = "AF + CKD4 (eGFR 22) and heart failure, 78F: apixaban dose?"
    text = "RESULTS: At CrCl 15-30, apixaban 2.5 mg twice daily was used in atrial fibrillation."
    source = EvidenceSource(
        doc_id="pmid:30000001", chunk_id="c0", origin="retrieved", title="T", pmid="30000001", text=text, approved=True
    )
    concepts = [
        Concept("atrial fibrillation", CONDITION, (form_of("atrial fibrillation"),)),
        Concept("heart failure", CONDITION, (form_of("heart failure"),)),
        Concept("older adults", POPULATION, (("older",), ("elderli",))),
        Concept("CKD4", TOPIC, (("ckd4",),)),
        Concept("mechanical valve", TOPIC, (form_of("mechanical valve"),)),
    ]
    answer = compose_answer(
        question=question,
        evidence=EvidenceSet([source]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
        concepts=concepts,
    )
    gap = answer.split("### What the evidence does not cover")[1]
    # A part of the clinical question no source addresses is named; the age, the stage the quoted dose row is
    # stated for and the question's other words are context once it names its condition.
    assert "heart failure" in gap
    assert "older adults" not in gap and "CKD4" not in gap and "mechanical valve" not in gap
    assert "atrial fibrillation" not in gap


def _cap_guideline(*shown):
    from evidence.findings import CuratedFinding

    return EvidenceSource(
        doc_id="pmid:31573350",
        chunk_id="key_finding",
        origin="library",
        title="Diagnosis and Treatment of Adults with Community-acquired Pneumonia",
        pmid="31573350",
        # The description mentions the drug; only the curated findings are quoted.
        text="Recommendations for adults with pneumonia; it does not endorse corticosteroids as routine add-ons.",
        study_name="CAP guideline",
        approved=True,
        findings=tuple(CuratedFinding(text, "awaiting review", False, "Q9", "https://example.org/") for text in shown),
    )


@pytest.mark.parametrize(
    ("findings", "opening"),
    [
        # No quoted finding speaks to the drug asked about: the answer says so first, then the nearest finding.
        (
            ("In severe pneumonia, give a beta-lactam plus a macrolide.",),
            "**Bottom line:** The cited evidence gives no finding on steroids. Nearest finding: ",
        ),
        # A finding on it leads as usual.
        (
            ("In severe pneumonia, give a beta-lactam plus a macrolide.", "Do not routinely give corticosteroids."),
            "**Bottom line:** **CAP guideline**",
        ),
    ],
)
def test_a_drug_the_question_asks_about_that_no_quoted_finding_addresses_is_said_first(findings, opening):
    from evidence.concepts import CONDITION, TOPIC

    question = "Should I give steroids for severe community-acquired pneumonia?"
    concepts = [
        Concept("community-acquired pneumonia", CONDITION, (form_of("community-acquired pneumonia"),)),
        Concept("steroids", TOPIC, (form_of("corticosteroids"), form_of("glucocorticoids"))),
    ]
    answer = compose_answer(
        question=question,
        evidence=EvidenceSet([_cap_guideline(*findings)]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
        concepts=concepts,
    )
    assert answer.startswith(opening)
    assert ("corticosteroids" in answer) == (len(findings) == 2)


@pytest.mark.parametrize(
    ("label", "spelled", "intervention"),
    [
        ("steroids", "corticosteroids", True),
        ("PPI", "proton pump inhibitor", True),
        ("DU", "duodenal ulcer", False),  # a disease
        ("MRSA", "methicillin-resistant Staphylococcus aureus", False),  # an organism, though it names a drug
        ("ctDNA", "circulating tumour DNA", False),
        # A time relative to a procedure ("was post-op ctDNA+ linked to relapse?") is no procedure asked about.
        ("post-op", "after surgery", False),
        ("CABG", "coronary artery bypass surgery", True),
    ],
)
def test_a_topic_names_an_intervention_by_its_head_noun(label, spelled, intervention):
    from evidence.concepts import TOPIC

    assert Concept(label, TOPIC, (form_of(spelled),)).names_intervention() is intervention


def _library(doc: str, text: str, *, name: str, kind: str = "trial") -> EvidenceSource:
    return EvidenceSource(doc_id=f"pmid:{doc}", chunk_id="key_finding", origin="library", title=name, pmid=doc,
                          text=text, study_name=name, kind=kind, approved=True)


def _compose_for(question: str, *sources: EvidenceSource) -> str:
    terms = content_terms(question)
    return compose_answer(question=question, evidence=EvidenceSet(list(sources)), settings=AnswerSettings(),
                          question_terms=terms, weights={term: 1.0 for term in terms})


def test_a_trial_protocol_never_leads_while_a_study_reports_a_result():
    protocol = _library("33931919", "The VEGA trial randomises ctDNA-negative colon cancer after resection to "
                        "surgery alone or 3 months of adjuvant chemotherapy.", name="VEGA protocol", kind="protocol")
    result = _library("35657320", "In ctDNA-positive colon cancer after resection, adjuvant chemotherapy cleared "
                      "ctDNA in 87% of patients.", name="DYNAMIC")
    question = "colon cancer after resection, ctDNA result — adjuvant chemotherapy?"

    answer = _compose_for(question, protocol, result)

    assert answer.startswith("**Bottom line:** **DYNAMIC**")
    assert "**VEGA protocol**" in answer  # still shown, as context
    # Alone it is all there is, and it is quoted.
    assert _compose_for(question, protocol).startswith("**Bottom line:** **VEGA protocol**")


def test_a_finding_stated_for_another_stage_does_not_lead_even_from_the_most_relevant_source():
    other_stage = _library("35657320", "In stage II colon cancer, adjuvant chemotherapy for ctDNA-positive patients "
                           "was noninferior for recurrence-free survival.", name="DYNAMIC")
    fitting = _library("36646802", "In stage II-III colon cancer, ctDNA positivity after surgery predicted worse "
                       "disease-free survival (HR 11.99).", name="GALAXY")

    answer = _compose_for("stage III colon cancer, ctDNA-positive after surgery — adjuvant chemotherapy?",
                          other_stage, fitting)

    assert answer.startswith("**Bottom line:** **GALAXY**")
    assert "**DYNAMIC**" in answer


def test_the_leads_source_is_not_quoted_again_for_other_patients():
    # A patient in the ICU: the guideline's severe-CAP regimen leads; its outpatient regimen is for other patients.
    guideline = _cap_guideline("In severe CAP, give a beta-lactam plus a macrolide.",
                               "For outpatients with comorbidities, give amoxicillin/clavulanate plus a macrolide.")
    answer = _compose_for("severe CAP in the ICU - beta-lactam plus macrolide?", guideline)

    assert answer.startswith("**Bottom line:** **CAP guideline**") and "severe CAP" in answer.split("\n")[0]
    assert "outpatients" not in answer
    # For an outpatient, it is the ICU regimen that is not quoted.
    answer = _compose_for("CAP outpatient with comorbidities - beta-lactam plus macrolide?", guideline)
    assert "outpatients" in answer.split("\n")[0] and "severe" not in answer


def test_a_question_naming_its_study_lists_no_word_of_its_own_as_a_missing_part():
    deliver = _library("36027570", "Dapagliflozin reduced worsening heart failure or cardiovascular death, with no "
                       "loss of benefit at higher ejection fractions.", name="DELIVER")
    concepts = [Concept("dapagliflozin", "decision", (form_of("dapagliflozin"),)),
                Concept("fade", "topic", (form_of("fade"),))]

    def composed(question: str) -> str:
        terms = content_terms(question)
        return compose_answer(question=question, evidence=EvidenceSet([deliver], library=[deliver]),
                              settings=AnswerSettings(),
                              question_terms=terms, weights={term: 1.0 for term in terms}, concepts=concepts)

    # Naming DELIVER, the question is about DELIVER's condition; "fade" is how it asks, not a part to cover.
    assert "do not address" not in composed("DELIVER - did the dapagliflozin benefit fade at LVEF above 60%?")
    # Naming nothing, a word no source addresses is still a part the answer says it lacks.
    assert "do not address fade" in composed("did the dapagliflozin benefit fade at LVEF above 60%?")


def test_a_lead_stated_only_for_other_patients_says_so_first():
    # A stage III patient: the only finding is stated for stage II. It is the nearest finding, not the answer (a
    # 72-year-old's stage III vignette opened with DYNAMIC's stage II result as if it answered).
    question = "stage III colon cancer, ctDNA positive after surgery - adjuvant chemotherapy?"
    text = "RESULTS: In stage II colon cancer, ctDNA-guided adjuvant chemotherapy was noninferior for recurrence."
    assert answer_to(question, text).startswith(
        "**Bottom line:** The cited evidence has no finding stated for these patients. Nearest finding: In stage II"
    )
    stage_two = answer_to(question.replace("stage III", "stage II"), text)
    assert stage_two.startswith("**Bottom line:** In stage II colon cancer")


def test_a_finding_that_names_no_stage_is_read_with_the_stage_its_study_enrolled():
    # Tie 2016's finding names no stage; its title says whom the cohort enrolled: stage II, not this patient.
    cohort = replace(_library("27384348", "Detectable ctDNA after adjuvant chemotherapy was associated with worse "
                              "recurrence-free survival (HR 11).", name="Tie 2016"),
                     title="Circulating tumor DNA analysis predicts recurrence in patients with stage II colon cancer")
    registry = _library("36646802", "ctDNA positivity after surgery predicted worse disease-free survival (HR 11.99).",
                        name="GALAXY")
    question = "stage III colon ca, ctDNA+ 4 wks post-op - chance of relapse?"

    assert _compose_for(question, cohort, registry).startswith("**Bottom line:** **GALAXY**")
    # Asked without a stage, the cohort's result is as good as any.
    assert _compose_for("colon ca, ctDNA+ after adjuvant chemo - relapse?", cohort, registry).startswith(
        "**Bottom line:** **Tie 2016**")


def test_a_decision_a_quoted_finding_is_tagged_with_is_not_listed_as_uncovered():
    finding = "End-of-treatment ctDNA clearance predicted a 5-year recurrence-free probability of 97%."
    prognosis = Concept("prognosis", "decision", (form_of("prognosis"),), code="risk_stratification")

    def composed(tags: tuple[str, ...]) -> str:
        source = replace(_library("40055522", finding, name="DYNAMIC 5-year"), findings=(
            CuratedFinding(shown=finding, review="", reviewed=False, locator="Abstract", source_url="",
                           decision_tags=tags),))
        question = "colon ca, ctDNA cleared by end of adjuvant chemo - prognosis?"
        return compose_answer(question=question, evidence=EvidenceSet([source]), settings=AnswerSettings(),
                              question_terms=content_terms(question), weights={}, concepts=[prognosis])

    # The curators say the finding speaks to risk stratification, in words other than "prognosis".
    assert "do not address" not in composed(("risk_stratification", "adjuvant"))
    assert "do not address prognosis" in composed(("adjuvant",))
