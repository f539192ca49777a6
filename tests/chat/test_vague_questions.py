"""No question crashes the answer: vague, numeric, one-word, punctuation, foreign and 10 KB questions all get
an answer or a reasoned abstention, in extractive mode and with both fake LLMs (issue 25, item 2)."""

from __future__ import annotations

import string
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from chat.pipeline import answer_question
from chat.pipeline.result import AnswerResult
from chat.services.conversations import UNEXPECTED_FAILURE, check_question
from tests.chat.fakes import Reply, Text

pytestmark = pytest.mark.django_db

ABSTENTION_REASONS = {"claims_unsupported", "not_clinical", "no_topic", "live_search_failed", "nothing_stored"}
VAGUE = [
    "What is the best treatment?",
    "Is it safe?",
    "What dose?",
    "How long?",
    "Should I stop it?",
    "Is it better?",
    "What about the side effects?",
    "And in children?",
]
FOREIGN = [
    "¿Cuál es el mejor tratamiento?",
    "Quel est le meilleur traitement de la fibrillation auriculaire ?",
    "Какая доза апиксабана?",
    "心房颤动用什么药\uff1f",
    "ما هو أفضل علاج؟",
    "अच्छा इलाज क्या है?",
    "Ist Apixaban sicher bei Dialyse?",
]
WORDS = ["apixaban", "stroke", "dose", "safe", "treatment", "hello", "PMID", "NCT", "aspirin", "the"]

questions = st.one_of(
    st.sampled_from(VAGUE),
    st.sampled_from(FOREIGN),
    st.integers(min_value=-(10**12), max_value=10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.from_regex(r"[A-Za-z]{1,24}", fullmatch=True),
    st.sampled_from(WORDS),
    st.text(alphabet=string.punctuation + " ", min_size=1, max_size=40),
    st.text(min_size=1, max_size=80),
    st.lists(st.sampled_from(WORDS + VAGUE), min_size=1, max_size=12).map(" ".join),
    st.integers(min_value=1, max_value=4000).map(lambda n: ("apixaban stroke dialysis " * 200)[:n]),
)
TEN_KB = ("Is apixaban better than warfarin in dialysis? " * 230)[:10_240]


def _asked(question: str) -> str:
    """Return the question as the chat page and the API pass it on, skipping what they refuse up front."""
    try:
        return check_question(question)
    except ValidationError:
        assume(False)
        raise


def _answered_or_reasoned(result: AnswerResult) -> None:
    assert result.answer.strip() and result.answer != UNEXPECTED_FAILURE
    if result.abstained:
        assert result.abstention["reason"] in ABSTENTION_REASONS, result.abstention
        assert result.abstention["message"] == result.answer
        assert result.references == [] and result.confidence == "RED"
    else:
        assert result.references, result.answer


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=questions)
@example(question="What is the best treatment?")
@example(question="Is it safe?")
@example(question="What dose?")
@example(question="-1")
@example(question=TEN_KB)
def test_every_question_gets_an_answer_or_a_reasoned_abstention_extractive(library, question):
    question = question if len(question) > 4000 else _asked(question)
    _answered_or_reasoned(answer_question(question=question))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    question=questions,
    written=st.sampled_from(
        [
            "I cannot tell from the evidence.",
            "Apixaban is preferred (PMID: 99999999).",
            "Warfarin is fine [citation:pmid:12345678:c0].",
            "",
        ]
    ),
)
@example(question="What is the best treatment?", written="I cannot tell from the evidence.")
@example(question="Is it safe?", written="Apixaban is preferred (PMID: 99999999).")
@example(question="What dose?", written="")
@example(question="-1", written="Warfarin is fine [citation:pmid:12345678:c0].")
def test_every_question_gets_an_answer_or_a_reasoned_abstention_with_a_model(
    library, request, llm_settings, provider, question, written
):
    fake = request.getfixturevalue(f"fake_{provider}")
    fake.script(Reply([Text(written)]), Reply([Text(written)]))
    result = answer_question(question=_asked(question), settings=llm_settings(provider))
    _answered_or_reasoned(result)


def test_a_question_naming_nothing_abstains_saying_what_to_add(library):
    result = answer_question(question="What dose?")
    assert result.abstained
    assert result.abstention["reason"] in {"no_topic", "not_clinical"}
    assert "condition" in result.abstention["message"]


def test_ask_with_a_negative_number_exits_cleanly(library):
    out, err = StringIO(), StringIO()
    call_command("ask", "--", "-1", stdout=out, stderr=err)
    assert "Confidence: RED (abstained)" in out.getvalue()
    assert "Traceback" not in out.getvalue() + err.getvalue()
