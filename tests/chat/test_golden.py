"""The golden questions: enough of them, across MRD and the six anchor scenarios, citing real library facts."""

import json
from collections import Counter

from chat.services.evaluation import GOLDEN_PATH, load_golden_set

ANCHORS = {
    "af_ckd_anticoagulation",
    "cap_sepsis_antibiotics",
    "dapt_hbr",
    "hfpef_ckd",
    "ahre_anticoagulation",
    "gi_bleed_anticoagulation_restart",
}


def test_golden_set_covers_the_library_stored_abstracts_and_abstentions():
    questions = load_golden_set(GOLDEN_PATH).questions
    assert len(questions) >= 60
    scenarios = Counter(question.scenario for question in questions)
    assert scenarios["mrd_oncology"] >= 10
    assert set(scenarios) >= ANCHORS
    assert scenarios["stored_abstracts"] >= 15
    assert sum(question.expect_abstain for question in questions) >= 10
    assert all(question.expected for question in questions if not question.expect_abstain)
    assert all(not set(q.expected) & set(q.forbidden) for q in questions)


def test_library_identifiers_are_landmark_study_facts(shared_data):
    landmarks = json.loads((shared_data / "landmark_studies.json").read_text())
    known = {f"pmid:{study['pmid']}" for study in landmarks if study.get("pmid")}
    for question in load_golden_set(GOLDEN_PATH).questions:
        if question.scenario != "stored_abstracts":
            assert set(question.expected) | set(question.acceptable) <= known, question.id


def test_out_of_library_questions_expect_a_listed_pubmedqa_abstract_never_their_own_wording(shared_data):
    golden = load_golden_set(GOLDEN_PATH)
    corpus = json.loads((shared_data / "pubmedqa" / "ori_pqal.json").read_text())
    assert golden.stored_abstracts is not None
    stored = set(golden.stored_abstracts.pmids)
    assert stored <= set(corpus)
    for question in golden.questions:
        if question.scenario == "stored_abstracts":
            (expected,) = question.expected
            pmid = expected.removeprefix("pmid:")
            assert pmid in stored, question.id
            # Written as a clinician asks, not PubMedQA's question copied.
            assert question.question.lower() != corpus[pmid]["QUESTION"].lower(), question.id
