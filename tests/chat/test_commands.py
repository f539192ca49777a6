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


def test_evaluate_prints_every_metric(library):
    out, _ = run("evaluate", "--scenario", "hfpef_ckd")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["hfpef-01", "hfpef-02", "hfpef-03"]
    assert "Citation coverage: 5/5 expected identifiers cited (100.0%)" in out
    assert "Confidence: GREEN 3 · YELLOW 0 · RED 0" in out
    assert "Abstention rate: 0/3 (0.0%); abstained where expected: 0/0" in out
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


def test_evaluate_json_summary_over_the_whole_golden_set(library):
    out, _ = run("evaluate", "--json")
    summary = json.loads(out)
    assert summary["questions"] == 29
    assert summary["fabricated_count"] == 0
    assert summary["confidence"]["GREEN"] + summary["confidence"]["YELLOW"] + summary["confidence"]["RED"] == 29
    assert summary["abstained_when_expected"] == summary["expected_abstentions"] == 1
    assert summary["citation_coverage"] >= 0.8
    assert summary["retrieval_recall"] >= 0.85


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
