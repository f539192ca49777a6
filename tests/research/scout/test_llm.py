"""The scout with an LLM (Anthropic and OpenAI-compatible fakes): validated JSON, PMIDs outside the top five removed."""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO

import pytest
from django.core.management import call_command

from evidence.sentences import split_sentences
from tests.chat.fakes import HttpError
from tests.pubmed.corpus import Corpus, CorpusEutils
from tests.research.scout.conftest import DISEASE, DRUG
from tests.research.scout.fakes import ScoutLlm, record_pmids

pytestmark = pytest.mark.django_db

EXPANSION = {
    "organ_terms": ["pancreas"],
    "queries": [
        {"axis": "drug_name", "terms": ["insulin"]},
        {"axis": "synonym", "terms": ["insulin glargine", "insulin therapy"]},
        {"axis": "drug_class_organ", "terms": ["insulins and analogues"]},
        {"axis": "mechanism_organ", "terms": ["glucose uptake"]},
        {"axis": "target_gene", "terms": ["INSR"]},
        {"axis": "target_gene", "terms": ["IRS1"]},
        {"axis": "target_gene", "terms": ["IRS2"]},
    ],
}


def last_sentence(corpus: Corpus, pmid: str) -> str:
    return split_sentences(corpus.records[pmid].sections[-1].text)[-1]


def run_scout() -> dict:
    out = StringIO()
    call_command("scout", DRUG, DISEASE, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_every_stage_uses_the_model_and_a_pmid_outside_the_top_five_is_removed(
    provider: str, scout_llm: Callable[[str], ScoutLlm], corpus_eutils: CorpusEutils, corpus: Corpus
) -> None:
    llm = scout_llm(provider)
    llm.replies["scout_disease_name"] = {"name": "Diabetes"}
    llm.replies["scout_expansion"] = EXPANSION

    def rerank(prompt: str) -> dict:
        pmids = record_pmids(prompt)
        return {"scores": [{"pmid": pmid, "score": round(10 * index / len(pmids), 2)}
                           for index, pmid in enumerate(pmids)] + [{"pmid": "99999999", "score": 10}]}

    def synthesis(prompt: str) -> dict:
        top = record_pmids(prompt)
        return {
            "summary": last_sentence(corpus, top[0]) + " Insulin cures every patient.",
            "key_findings": [
                {"text": last_sentence(corpus, top[0]), "pmids": [top[0]]},
                {"text": last_sentence(corpus, top[1]), "pmids": ["99999999", top[1]]},
                {"text": last_sentence(corpus, top[2]), "pmids": ["12345"]},
                {"text": "Insulin cured diabetes in 100% of patients.", "pmids": [top[3]]},
            ],
        }

    llm.replies["scout_rerank"] = rerank
    llm.replies["scout_synthesis"] = synthesis
    result = run_scout()
    assert llm.kinds() == ["scout_disease_name", "scout_expansion", "scout_rerank", "scout_synthesis"]
    assert result["llm"] == f"{provider}:{'claude-test' if provider == 'anthropic' else 'llama-test'}"
    assert (result["expansion"], result["organ_terms"]) == ("llm", ["pancreas"])
    assert [q["axis"] for q in result["queries"]].count("target_gene") == 2  # capped
    assert result["disease"]["source"] == "llm" and result["disease"]["normalised"] == "diabetes"
    top20 = [hit["pmid"] for hit in result["top20"]]
    top5 = [item["pmid"] for item in result["top5"]]
    assert result["reranker"] == "llm"
    assert top5 == list(reversed(top20))[:5]  # the model scored later candidates higher
    assert result["synthesis"] == "llm"
    assert [(f["text"], f["pmids"]) for f in result["key_findings"]] == [
        (last_sentence(corpus, top5[0]), [top5[0]]),
        (last_sentence(corpus, top5[1]), [top5[1]]),
    ]
    assert result["supporting_pmids"] == top5[:2]
    removed = {(r["text"], tuple(r["pmids"])): r["reason"] for r in result["removed"]}
    assert removed[(last_sentence(corpus, top5[1]), ("99999999",))] == (
        "PMID 99999999 is not one of the abstracts this summary may cite")
    assert removed[(last_sentence(corpus, top5[2]), ("12345",))] == (
        "PMID 12345 is not one of the abstracts this summary may cite")
    assert ("Insulin cured diabetes in 100% of patients.", (top5[3],)) in removed
    assert ("Insulin cures every patient.", ()) in removed
    assert "Insulin cures every patient" not in result["summary"]
    assert result["summary"].endswith(last_sentence(corpus, top5[0]))


@pytest.mark.parametrize("provider", ["openai"])  # provider errors of both wire formats are tested in tests/chat
def test_invalid_or_failed_model_replies_fall_back_and_say_so(
    provider: str, scout_llm: Callable[[str], ScoutLlm], corpus_eutils: CorpusEutils
) -> None:
    llm = scout_llm(provider)
    llm.replies["scout_disease_name"] = {"name": "cancer"}  # over-generic: ignored
    llm.replies["scout_expansion"] = "I would search for insulin."
    llm.replies["scout_rerank"] = {"scores": [{"pmid": "abc", "score": 5}]}
    llm.replies["scout_synthesis"] = HttpError(500, "api_error", "overloaded")
    result = run_scout()
    assert result["disease"]["source"] == "rules" and result["disease"]["normalised"] == "diabetes"
    assert result["expansion"] == "rules"
    assert result["reranker"] == "lexical"
    assert result["reranker_note"].startswith(
        "LLM reranker failed (LlmReplyInvalid: scores.0.pmid: 'abc' does not match")
    assert result["synthesis"] == "extractive"
    assert result["synthesis_note"].startswith("LLM synthesis not used (ProviderError:")
    assert result["key_findings"] and all(set(f["pmids"]) <= {i["pmid"] for i in result["top5"]}
                                          for f in result["key_findings"])
