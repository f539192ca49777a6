"""With an LLM provider, the model proposes the PICO as JSON (non-streaming call), validated against the schema."""

import json

import pytest

from chat.pipeline import answer_question
from chat.providers import get_provider
from chat.providers.base import ProviderError
from evidence.pico import PICO_JSON_SCHEMA
from tests.chat.fakes import Reply, Text

pytestmark = pytest.mark.django_db

QUESTION = "Should apixaban be dose-reduced in atrial fibrillation with CKD stage 4?"
PICO = {
    "patient": "adult with atrial fibrillation and CKD stage 4",
    "intervention": "reduced-dose apixaban",
    "comparison": "standard-dose apixaban",
    "outcome": "stroke and major bleeding",
    "condition": "atrial fibrillation with chronic kidney disease",
    "disease_tags": ["af", "ckd", "invented_tag"],
    "decision_tags": ["dose", "anticoagulation"],
    "primary_disease_tag": "af",
    "primary_decision_tag": "dose",
}
ANSWER = Reply(
    [
        Text(
            "The US guideline revises advice on estimating stroke risk and on oral anticoagulation in atrial "
            "fibrillation (PMID: 38033089)."
        )
    ]
)


def _understand(result):
    return next(step["data"] for step in result.trace if step["step"] == "understand")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_model_pico_is_validated_and_drives_the_pipeline(provider, request, library, llm_settings):
    fake = request.getfixturevalue(f"fake_{provider}")
    fake.script(Reply([Text("```json\n" + json.dumps(PICO) + "\n```")]), ANSWER)
    result = answer_question(question=QUESTION, settings=llm_settings(provider, model_pico=True))
    pico = _understand(result)["pico"]
    assert pico["source"] == "llm"
    assert (pico["primary_disease_tag"], pico["primary_decision_tag"]) == ("af", "dose")
    assert pico["comparison"] == "standard-dose apixaban"
    assert pico["notes"] == ["dropped tags not in the vocabulary: invented_tag"]
    first = fake.requests[0]
    assert not first.get("stream")
    assert "JSON schema of the reply" in json.dumps(first)
    assert fake.requests[1].get("stream") is True
    assert [reference["pmid"] for reference in result.references][:1] == ["38033089"]


def test_unparseable_model_pico_falls_back_to_the_vocabulary(library, fake_anthropic, llm_settings):
    fake_anthropic.script(Reply([Text("Sure! The patient has AF.")]), ANSWER)
    result = answer_question(question=QUESTION, settings=llm_settings("anthropic", model_pico=True))
    pico = _understand(result)["pico"]
    assert pico["source"] == "vocabulary"
    assert pico["disease_tags"][:2] == ["af", "ckd"]
    assert "vocabulary extractor used" in pico["notes"][0]
    assert result.abstained is False


def test_complete_json_reports_a_reply_without_json_as_malformed(fake_openai, llm_settings):
    fake_openai.script(Reply([Text("I cannot do that.")]))
    provider = get_provider(llm_settings("openai"))
    with pytest.raises(ProviderError) as excinfo:
        provider.complete_json("Extract.", PICO_JSON_SCHEMA, model="llama-test")
    assert excinfo.value.code == "llm_malformed_output"
    assert "was asked for a JSON object but replied: 'I cannot do that.'" in excinfo.value.message
