"""`manage.py ask` and `manage.py evaluate`."""

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_ask_json_prints_the_documented_answer_document(library):
    out, _ = run(
        "ask", "Should device-detected subclinical atrial fibrillation be treated with anticoagulation?", "--json"
    )
    document = json.loads(out)
    assert {"answer", "citations", "references", "confidence", "abstained", "trace"} <= set(document)
    assert {reference["pmid"] for reference in document["references"]} >= {"37952132", "37622677"}
    for reference in document["references"]:
        assert {"url", "title", "authors", "journal", "year", "badges"} <= set(reference)
        assert {"pmid", "doi", "nct"} & set(reference)


def test_ask_prints_answer_references_and_confidence(library):
    out, _ = run("ask", "Does", "edoxaban", "prevent", "stroke", "in", "atrial", "high-rate", "episodes?")
    assert "NOAH-AFNET 6" in out
    assert "\nReferences\n[1] " in out
    assert "https://pubmed.ncbi.nlm.nih.gov/37622677/" in out
    assert out.rstrip().endswith("Confidence: GREEN") or out.rstrip().endswith("Confidence: YELLOW")


def test_ask_refuses_an_empty_question():
    with pytest.raises(CommandError, match=r"Type a question first: the question is empty\."):
        run("ask", "   ")


def test_ask_refuses_invalid_pipeline_settings(settings):
    settings.ANSWER_SETTINGS = {"retrieval_k": 0}
    with pytest.raises(CommandError, match="retrieval_k: Input should be greater than or equal to 1"):
        run("ask", "AF and CKD?")


def test_evaluate_prints_every_metric(library, shared_data):
    out, _ = run("evaluate", "--scenario", "hfpef_ckd", "--min-relevance", "0.5")
    lines = out.splitlines()
    assert lines[0] == "Stored 115 PubMedQA abstracts the golden questions need."
    assert [line.split()[0] for line in lines[1:4]] == ["hfpef-01", "hfpef-02", "hfpef-03"]
    assert "Citation coverage: 5/5 expected identifiers cited (100.0%)" in out
    assert "Confidence: GREEN 3 · YELLOW 0 · RED 0" in out
    assert "Abstention rate: 0/3 (0.0%); abstained where expected: 0/0; GREEN where abstention expected: 0" in out
    assert re.search(r"Relevance precision: \d+/\d+ references address the question", out)
    assert "Fabricated identifiers shown: 0" in out
    assert "Retrieval recall: 5/5 expected identifiers retrieved (100.0%)" in out
    # The extractive composer quotes its sources: every statement it writes is supported by its citation.
    recall = re.search(r"Citation recall \(claim support\): (\d+)/(\d+) statements", out)
    assert recall and recall.group(1) == recall.group(2) != "0"
    assert "citation precision: " in out


def test_claim_support_counts_removed_statements_as_written_and_unsupported():
    from chat.pipeline.result import AnswerResult
    from chat.services.evaluation import claim_support

    result = AnswerResult(
        question="q",
        answer="a [1].",
        citations=[{"n": 1, "doc_id": "pmid:1"}, {"n": 2, "doc_id": "pmid:2"}],
        references=[],
        confidence="YELLOW",
        abstained=False,
        trace=[],
        settings_hash="",
        provider="extractive",
        model="",
        claims=[{"text": "a", "citations": [1, 2], "supported": True, "support": [{"doc_id": "pmid:1"}]}],
        claims_removed=[{"kind": "claim", "text": "b"}, {"kind": "study_name", "text": "COSMOS"}],
    )
    assert claim_support(result) == {
        "claims_supported": 1,
        "claims_written": 2,
        "citations_supporting": 1,
        "citations_made": 3,
    }


def test_evaluate_json_summary_over_the_whole_golden_set(library, shared_data):
    out, _ = run("evaluate", "--json")
    summary = json.loads(out)
    assert summary["false_abstentions"] == []
    assert summary["questions"] >= 60
    assert summary["fabricated_count"] == 0
    assert sum(summary["confidence"].values()) == summary["questions"]
    assert summary["abstained_when_expected"] == summary["expected_abstentions"] >= 10
    assert summary["green_when_abstention_expected"] == 0
    assert summary["forbidden_cited"] == []
    assert summary["citation_coverage"] >= 0.85
    assert summary["relevance_precision"] >= 0.8
    stored = [score for score in summary["scores"] if score["scenario"] == "stored_abstracts"]
    # Out-of-library questions are answered from the stored abstract, in a clinician's words.
    assert sum(1 for score in stored if set(score["expected"]) <= set(score["cited"])) >= 0.85 * len(stored)


def test_evaluate_exits_non_zero_naming_each_missed_target(library, tmp_path):
    golden = tmp_path / "golden.json"
    golden.write_text(
        json.dumps(
            {
                "version": 2,
                "questions": [
                    {
                        "id": "q1",
                        "scenario": "hfpef_ckd",
                        "question": "Does empagliflozin reduce heart failure hospitalisation in HFpEF?",
                        "expected": ["pmid:31573350"],
                        "forbidden": ["pmid:34449189"],
                    },
                    {
                        "id": "q2",
                        "scenario": "out_of_scope",
                        "question": "Should device-detected subclinical atrial fibrillation be anticoagulated?",
                        "expect_abstain": True,
                    },
                ],
            }
        )
    )
    with pytest.raises(CommandError) as raised:
        run("evaluate", "--golden", str(golden))
    message = str(raised.value)
    assert "citation coverage 0.0% is below 85%" in message
    assert "relevance precision 0.0% is below 80%" in message
    assert "off-topic references were cited: q1: pmid:34449189" in message
    assert "abstained on 0/1 questions that must abstain" in message
    assert "1 question(s) that must abstain were answered GREEN" in message


def test_evaluate_rejects_a_target_outside_zero_to_one(library):
    with pytest.raises(CommandError, match="--min-relevance must be between 0 and 1"):
        run("evaluate", "--min-relevance", "1.5")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        (
            '{"version": 1, "questions": [{"id": "a", "scenario": "s", "question": "Is AF bad?", '
            '"expected": ["pmid:abc"]}]}',
            "'pmid:abc' is not pmid:<PMID>, doi:<DOI> or nct:<NCT id>",
        ),
        (
            '{"version": 1, "questions": [{"id": "a", "scenario": "s", "question": "Is AF bad?"}, '
            '{"id": "a", "scenario": "s", "question": "Is AF bad?"}]}',
            "repeats question ids: a",
        ),
    ],
)
def test_evaluate_refuses_a_malformed_golden_file(tmp_path, content, message):
    path = tmp_path / "golden.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        run("evaluate", "--golden", str(path))


def test_evaluate_unknown_scenario_is_an_error():
    with pytest.raises(CommandError, match=r"No golden question has scenario 'dermatology'\."):
        run("evaluate", "--scenario", "dermatology")


def test_evaluate_reports_first_sentences_false_abstentions_and_follow_ups(library, tmp_path):
    golden = tmp_path / "clinician.json"
    golden.write_text(
        json.dumps(
            {
                "version": 3,
                "questions": [
                    {
                        "id": "c1",
                        "scenario": "clinician",
                        "kind": "short",
                        "split": "dev",
                        "question": "AF with CKD4 (eGFR 22): DOAC or warfarin?",
                        "expected": ["pmid:38490803", "pmid:29522134"],
                        "first_sentence": ["no first sentence says this|nor this"],
                        "never_missing": ["eGFR"],
                    },
                    {
                        "id": "c2",
                        "scenario": "clinician",
                        "kind": "follow_up",
                        "split": "held_out",
                        "follow_up_of": "c1",
                        "question": "and what about rivaroxaban?",
                        "expected": ["pmid:31573350"],
                    },
                ],
            }
        )
    )
    with pytest.raises(CommandError) as raised:
        run("evaluate", "--golden", str(golden), "--skip-stored-abstracts")
    message = str(raised.value)
    assert "the first sentence answered 0/1 (0.0%), below 90%" in message
    assert "question words listed as not covered" not in message
    out, _ = run(
        "evaluate", "--golden", str(golden), "--skip-stored-abstracts", "--split", "dev", "--min-first-sentence", "0",
        "--min-relevance", "0", "--min-coverage", "0",
    )
    assert out.splitlines()[0].startswith("c1 ")
    assert "FIRST SENTENCE does not state: no first sentence says this|nor this" in out
    assert "First sentence states what was asked: 0/1 (0.0%); question words listed as not covered: 0" in out
    assert "False abstentions: 0" in out


def test_a_follow_up_is_asked_after_its_conversation_and_must_follow_an_earlier_question(tmp_path):
    from chat.services.golden import GoldenError, conversation, load_golden_set

    rows = [
        {"id": "a", "scenario": "s", "question": "AF with CKD4: which DOAC?"},
        {"id": "b", "scenario": "s", "question": "what dose?", "follow_up_of": "a"},
        {"id": "c", "scenario": "s", "question": "and on dialysis?", "follow_up_of": "b"},
    ]
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"version": 3, "questions": rows}))
    questions = load_golden_set(path).questions
    assert conversation(questions[2], questions) == ["AF with CKD4: which DOAC?", "what dose?"]
    assert conversation(questions[0], questions) == []
    path.write_text(json.dumps({"version": 3, "questions": [rows[1], rows[0]]}))
    with pytest.raises(GoldenError, match="b follows up 'a', which is not asked before it"):
        load_golden_set(path)


def test_the_first_sentence_and_the_gap_line_are_read_as_the_clinician_reads_them():
    from chat.services.golden import first_sentence, listed_as_missing, unmet_requirements

    answer = (
        "**Bottom line:** **CIRCULATE-Japan GALAXY (interim)** (Nat Med, 2023; curated finding, awaiting review): "
        "ctDNA positivity 4 weeks after surgery was associated with recurrence (HR 10.0) [1]. Adjuvant chemotherapy "
        "helped ctDNA-positive patients [1].\n\n### What the evidence does not cover\n\nThe cited sources do not "
        "address imaging or CEA; weigh that part with clinical judgement."
    )
    lead = first_sentence(answer)
    assert lead == "ctDNA positivity 4 weeks after surgery was associated with recurrence (HR 10.0) [1]."
    assert unmet_requirements(lead, ["associated|predict", "adjuvant|chemotherapy"]) == ["adjuvant|chemotherapy"]
    assert listed_as_missing(answer, ["CEA", "weeks", "ctDNA", "imaging"]) == ["CEA", "imaging"]
    abstention = "Nothing stored here addresses gout, colchicine and CKD4, and the live PubMed search could not run."
    assert listed_as_missing(abstention, ["CKD4", "PubMed", "run"]) == ["CKD4"]
