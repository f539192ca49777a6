"""The golden questions: enough of them, across MRD and the six anchor scenarios, citing real library facts."""

import json
from collections import Counter

from chat.services.golden import GOLDEN_PATH, load_golden_set

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


def test_the_clinician_set_has_shorthand_vignettes_follow_ups_and_a_held_out_part(shared_data):
    from chat.services.golden import CLINICIAN_PATH

    questions = load_golden_set(CLINICIAN_PATH).questions
    kinds = Counter(question.kind for question in questions)
    assert len(questions) >= 80
    vignettes = [q for q in questions if q.kind == "vignette"]
    assert len(vignettes) >= 15 and all(len(q.question.split()) > 100 for q in vignettes)
    assert kinds["follow_up"] >= 10 and all(q.follow_up_of for q in questions if q.kind == "follow_up")
    assert kinds["outside"] >= 10 and all(q.expect_abstain and not q.expected for q in questions if q.kind == "outside")
    held_out = sum(question.split == "held_out" for question in questions)
    assert 0.2 <= held_out / len(questions) <= 0.35
    landmarks = json.loads((shared_data / "landmark_studies.json").read_text())
    known = {f"pmid:{study['pmid']}" for study in landmarks if study.get("pmid")}
    for question in questions:
        assert set(question.expected) | set(question.acceptable) <= known, question.id
        if not question.expect_abstain:
            assert question.expected and question.first_sentence, question.id
