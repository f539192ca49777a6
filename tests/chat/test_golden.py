"""The golden questions: enough of them, across MRD and the six anchor scenarios, citing real library facts."""

import json
from collections import Counter

from chat.services.evaluation import GOLDEN_PATH, load_golden

ANCHORS = {
    "af_ckd_anticoagulation",
    "cap_sepsis_antibiotics",
    "dapt_hbr",
    "hfpef_ckd",
    "ahre_anticoagulation",
    "gi_bleed_anticoagulation_restart",
}


def test_golden_set_covers_mrd_and_every_anchor_scenario():
    questions = load_golden(GOLDEN_PATH)
    assert len(questions) >= 25
    scenarios = Counter(question.scenario for question in questions)
    assert scenarios["mrd_oncology"] >= 10
    assert set(scenarios) >= ANCHORS
    assert all(question.expected for question in questions if not question.expect_abstain)


def test_expected_identifiers_are_landmark_study_facts(shared_data):
    landmarks = json.loads((shared_data / "landmark_studies.json").read_text())
    known = {f"pmid:{study['pmid']}" for study in landmarks if study.get("pmid")}
    for question in load_golden(GOLDEN_PATH):
        assert set(question.expected) <= known, question.id
