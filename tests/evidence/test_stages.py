"""The patient's disease stage in a question and the stages a finding is stated for (evidence.stages)."""

from __future__ import annotations

import pytest

from evidence.stages import fits, question_stage, stage_spans


@pytest.mark.parametrize(
    ("question", "stage"),
    [
        ("Stage III colon ca, ctDNA positive after surgery - does adjuvant chemo help?", 3),
        ("stage IIIB NSCLC after chemoradiation - durvalumab?", 3),
        ("pT3N0 stage 2 colon cancer, MSS", 2),
        # A kidney stage is kidney function (evidence.kidney_function), not the disease stage.
        ("AF with CKD stage 4 - apixaban dose?", None),
        ("stage 3 CKD and AF", None),
        # Two stages named: no single patient stage.
        ("stage II or III colon cancer ctDNA", None),
        ("colon cancer ctDNA", None),
    ],
)
def test_the_patients_stage_is_read_from_the_question(question, stage):
    assert question_stage(question) == stage


@pytest.mark.parametrize(
    ("sentence", "fitted"),
    [
        ("In resected stage II colon cancer, ctDNA-guided management was noninferior.", False),
        ("ctDNA positivity identified stage II-III colorectal cancer patients who benefited.", True),
        ("VEGA enrols high-risk stage II or low-risk stage III colon cancer.", True),
        ("GALAXY monitors resectable stage II-IV or recurrent colorectal cancer.", True),
        ("Among ctDNA-positive patients given adjuvant chemotherapy, 35 of 40 cleared ctDNA.", None),
        ("Anticoagulation in CKD stage 3-4 was studied.", None),
    ],
)
def test_a_finding_fits_the_patients_stage_when_stated_for_it(sentence, fitted):
    assert fits(3, sentence) is fitted
    assert fits(None, sentence) is None


def test_a_stage_is_found_where_it_is_written():
    text = "NSCLC stage IIIA resected, stages II-III"
    assert [text[a:b] for a, b in stage_spans(text)] == ["stage IIIA", "stages II-III"]
