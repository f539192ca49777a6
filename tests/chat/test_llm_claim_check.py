"""With a language model configured, it also judges the answer's claims (one batched JSON call); the exact
checks still veto, and a failed or malformed call leaves the verdict to the local verifier model."""

import json

import pytest

from chat.pipeline import DoneEvent, answer_events
from tests.chat.fakes import Garbage, HttpError, Reply, Text

pytestmark = pytest.mark.django_db

QUESTION = (
    "Does circulating tumour DNA after surgery predict recurrence in stage II colon cancer, "
    "and should it guide adjuvant chemotherapy?"
)
DYNAMIC, TIE_2016 = "35657320", "27384348"
CHANGED_NUMBER = (
    "Deciding adjuvant treatment by postoperative ctDNA cut chemotherapy use to 5% versus 28% under standard "
    f"management [citation:pmid:{DYNAMIC}]."
)
PREDICTS = (
    "Among patients not given chemotherapy, those with detectable postoperative ctDNA recurred far more often "
    f"[citation:pmid:{TIE_2016}]."
)


@pytest.fixture(params=["anthropic", "openai"])
def model(request, llm_settings):
    fake = request.getfixturevalue(f"fake_{request.param}")
    return fake, llm_settings(request.param, model_claim_check=True)


def _verdicts(*items: tuple[int, str, int]) -> Reply:
    body = {"verdicts": [{"claim": c, "verdict": v, "sentence": s} for c, v, s in items]}
    return Reply([Text(json.dumps(body))])


def _answer(settings):
    return next(e.result for e in answer_events(question=QUESTION, settings=settings) if isinstance(e, DoneEvent))


def _check_prompt(fake) -> str:
    """Return the text of the claim-check request (the one non-streaming call after the answer)."""
    calls = [r for r in fake.requests if not r.get("stream")]
    assert len(calls) == 1, fake.requests
    return json.dumps(calls[0])


def test_the_models_contradiction_removes_the_claim_and_is_recorded(library, model) -> None:
    fake, settings = model
    fake.script(Reply([Text(f"{PREDICTS} {CHANGED_NUMBER}")]), _verdicts((1, "contradicted", 1), (2, "supported", 1)))
    result = _answer(settings)
    prompt = _check_prompt(fake)
    # One batched call carries both claims, numbered, with their candidate sentences.
    assert "Claim 1:" in prompt and "Claim 2:" in prompt and "[1]" in prompt
    assert "recurred far more often" not in result.answer
    removed = {item["text"]: item for item in result.claims_removed}
    reversed_ = next(item for text, item in removed.items() if "recurred far more often" in text)
    assert reversed_["verdict"] == "contradicted"
    assert "judged by the language model" in reversed_["reason"]
    # The model called the changed number supported: the exact check removes it all the same.
    changed = next(item for text, item in removed.items() if "5% versus 28%" in text)
    assert changed["verdict"] == "not_enough_info"
    assert changed["reason"].startswith("the number 5%")
    assert "5% versus" not in result.answer


@pytest.mark.parametrize(
    "failure",
    [
        Reply([Text("Sure! Claim 1 is supported, claim 2 is not.")]),  # not JSON at all
        Reply([Text(json.dumps({"verdicts": [{"claim": 9, "verdict": "supported", "sentence": 1}]}))]),
        Reply([Text(json.dumps({"verdicts": [{"claim": 1, "verdict": "maybe", "sentence": 1}]}))]),
        HttpError(500, "api_error", "overloaded"),
        Garbage("<html>gateway</html>", content_type="text/html"),
    ],
    ids=["prose", "unknown-claim", "unknown-verdict", "http-500", "html"],
)
def test_a_failed_or_malformed_check_leaves_the_verdict_to_the_local_model(library, model, llm_settings, failure):
    fake, settings = model
    fake.script(Reply([Text(f"{PREDICTS} {CHANGED_NUMBER}")]), failure)
    checked = _answer(settings)
    assert len([r for r in fake.requests if not r.get("stream")]) == 1

    fake.script(Reply([Text(f"{PREDICTS} {CHANGED_NUMBER}")]))
    local = _answer(settings.model_copy(update={"model_claim_check": False}))
    assert [r for r in fake.requests if not r.get("stream")] == []
    assert checked.answer == local.answer
    assert [(c["text"], c["verdict"]) for c in checked.claims] == [(c["text"], c["verdict"]) for c in local.claims]
    assert "5% versus" not in checked.answer


def test_a_verdict_that_quotes_no_sentence_it_was_shown_is_ignored(library, model) -> None:
    fake, settings = model
    fake.script(Reply([Text(CHANGED_NUMBER)]), _verdicts((1, "supported", 42)))
    result = _answer(settings)
    assert "5% versus" not in result.answer
    # The local verifier decided (its reason never names the language model).
    assert result.claims_removed[0]["reason"] and "language model" not in result.claims_removed[0]["reason"]
