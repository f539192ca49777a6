"""`manage.py scout` end to end against the fake E-utilities over real abstracts, without an LLM."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from pubmed.models import SearchQuery
from research.models import ScoutRun, ScoutRunStatus
from research.scout.pipeline import STAGES
from tests.pubmed.corpus import Corpus, CorpusEutils
from tests.research.scout.conftest import DISEASE, DRUG

pytestmark = pytest.mark.django_db


def scout_json(*args: str) -> dict:
    out = StringIO()
    call_command("scout", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_scout_json_has_the_summary_the_queries_and_stage_timings(
    corpus_eutils: CorpusEutils, corpus: Corpus, profile_file: Path
) -> None:
    result = scout_json(DRUG, DISEASE, "--profile", str(profile_file), "--max-pmids", "200")
    assert {"summary", "study_count", "study_types", "strength", "key_findings", "supporting_pmids"} <= set(result)
    assert 5 <= len(result["queries"]) <= 10
    assert {q["axis"] for q in result["queries"]} == {"drug_name", "synonym", "drug_class_organ", "mechanism_organ",
                                                      "target_gene"}
    expected = list(dict.fromkeys(p for q in result["queries"] for p in corpus.search(q["query"])[:200]))
    assert result["pmid_count"] == len(expected) > 5
    assert [q["pmids_found"] for q in result["queries"]] == [len(corpus.search(q["query"])) for q in result["queries"]]
    top20 = [hit["pmid"] for hit in result["top20"]]
    top5 = [item["pmid"] for item in result["top5"]]
    assert len(top20) == min(20, len(expected)) and set(top20) <= set(expected)
    assert len(top5) == 5 and set(top5) <= set(top20)
    assert result["reranker"] == "lexical" and result["synthesis"] == "extractive" and result["llm"] == "none"
    assert result["key_findings"], result["removed"]
    for finding in result["key_findings"]:
        assert set(finding["pmids"]) <= set(top5)
        assert finding["quote"]
    assert result["supporting_pmids"] == list(dict.fromkeys(p for f in result["key_findings"] for p in f["pmids"]))
    assert result["study_count"] == 5
    assert result["semantic_query"] == (
        "Evidence for insulin as a treatment for diabetes, including clinical trials, efficacy data, "
        "and mechanism of action"
    )
    assert set(result["timings"]) == {key for key, _ in STAGES}  # jsonb keeps no key order
    record = SearchQuery.objects.get()
    assert (record.drug, record.disease, record.pmids) == (DRUG, DISEASE, expected)
    assert record.pubmed_query.split("\n") == [q["query"] for q in result["queries"]]
    run = ScoutRun.objects.get()
    assert run.status == ScoutRunStatus.SUCCEEDED and all(step["status"] == "done" for step in run.steps)


def test_a_rerun_updates_the_pair_row_and_fetches_nothing_again(corpus_eutils: CorpusEutils) -> None:
    scout_json(DRUG, "Diabetes.")
    first = SearchQuery.objects.get()
    assert (first.drug, first.disease) == (DRUG, DISEASE)  # the disease as normalised and searched
    efetches = len(corpus_eutils.requests("efetch.fcgi"))
    again = scout_json(DRUG.upper(), f" {DISEASE} ")
    record = SearchQuery.objects.get()
    assert (record.pk, record.created_at) == (first.pk, first.created_at)
    assert record.searched_at > first.searched_at
    assert again["new_abstracts"] == 0
    assert len(corpus_eutils.requests("efetch.fcgi")) == efetches
    assert ScoutRun.objects.count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["insulin", "  "], "disease: Give the disease name, e.g. non-small cell lung cancer."),
        (["insulin", "diabetes", "--max-pmids", "501"], "max_pmids: max_pmids must be a whole number from 1 to 500"),
        (["insulin", "diabetes", "--profile", "/nonexistent/profile.json"], "Cannot read the profile file"),
    ],
)
def test_bad_input_exits_with_a_message_that_says_what_to_change(args: list[str], message: str) -> None:
    with pytest.raises(CommandError) as caught:
        call_command("scout", *args)
    assert str(caught.value).startswith(message)
    assert not ScoutRun.objects.exists()


def test_a_profile_that_is_not_valid_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"targets": ["EGFR"')
    with pytest.raises(CommandError, match=r"profile: The drug profile is not valid JSON \("):
        call_command("scout", "gefitinib", "lung cancer", "--profile", str(path))
    path.write_text('{"dose": "250 mg"}')
    with pytest.raises(CommandError, match=r"profile: Unknown drug profile key\(s\): dose"):
        call_command("scout", "gefitinib", "lung cancer", "--profile", str(path))


def test_a_pair_pubmed_knows_nothing_about_ends_with_an_insufficient_summary(corpus_eutils: CorpusEutils) -> None:
    result = scout_json("zorblatinib", "diabetes")
    assert (result["pmid_count"], result["top20"], result["top5"], result["key_findings"]) == (0, [], [], [])
    assert result["disease"]["count"] == 0 and result["disease"]["broadened"] is False
    assert (result["strength"], result["study_count"]) == ("insufficient", 0)
    assert result["summary"] == "No studies on zorblatinib for diabetes were found; the evidence is insufficient."
    assert len(result["queries"]) == 5
    assert SearchQuery.objects.get().pmids == []


def test_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        call_command("scout", "--help")
    shown = capsys.readouterr().out
    assert "--profile FILE.json" in shown
    assert "--max-pmids N" in shown
