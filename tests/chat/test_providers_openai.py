"""The OpenAI-compatible provider (Ollama, vLLM, llama.cpp) against a fake chat-completions server."""

import pytest

from chat.pipeline import answer_question
from tests.chat.fakes import Garbage, HttpError, Reply, StreamError, Text, ToolUse

pytestmark = pytest.mark.django_db

QUESTION = (
    "Should an SGLT2 inhibitor be started in heart failure with preserved ejection fraction and chronic kidney disease?"
)
EMPEROR, DELIVER = "34449189", "36027570"


def pmids(result):
    return [reference.get("pmid") for reference in result.references]


def test_request_is_a_streamed_chat_completion_with_function_tools(library, fake_openai, llm_settings):
    fake_openai.script(Reply([Text(f"Empagliflozin helped [citation:pmid:{EMPEROR}:key_finding].")]))
    answer_question(question=QUESTION, settings=llm_settings("openai"))
    request = fake_openai.requests[0]
    assert (request["model"], request["stream"], request["tool_choice"]) == ("llama-test", True, "auto")
    assert [message["role"] for message in request["messages"]] == ["system", "user"]
    assert "MANDATORY CITATION RULES" in request["messages"][0]["content"]
    assert [tool["function"]["name"] for tool in request["tools"]] == [
        "search_pubmed",
        "get_pubmed_article",
        "get_trial",
    ]
    assert request["tools"][0]["function"]["parameters"]["required"] == ["query"]


def test_cited_answer_streams_through_verification(library, fake_openai, llm_settings):
    fake_openai.script(
        Reply(
            [
                Text(
                    "Empagliflozin lowered the combined risk of cardiovascular death or hospitalisation for heart "
                    f"failure compared with placebo (PMID: {EMPEROR}). In DELIVER, dapagliflozin reduced worsening "
                    "heart failure events or cardiovascular death (NCT03619213)."
                )
            ]
        )
    )
    result = answer_question(question=QUESTION, settings=llm_settings("openai"))
    assert result.answer == (
        "Empagliflozin lowered the combined risk of cardiovascular death or hospitalisation for heart failure compared "
        "with placebo [1]. In DELIVER, dapagliflozin reduced worsening heart failure events or cardiovascular "
        "death [2]."
    )
    assert [claim["citations"] for claim in result.claims] == [[1], [2]]
    assert all(citation["support"] for citation in result.citations)
    assert (pmids(result), result.confidence, result.provider) == ([EMPEROR, DELIVER], "GREEN", "openai")


def test_fabricated_identifiers_are_removed(library, fake_openai, llm_settings):
    fake_openai.script(Reply([Text("Dapagliflozin works (PMID: 11111111; doi:10.5555/invented.1). It is safe.")]))
    result = answer_question(question=QUESTION, settings=llm_settings("openai"))
    assert "11111111" not in result.answer and "10.5555" not in result.answer
    assert [item["value"] for item in result.removed] == ["11111111", "10.5555/invented.1"]
    # Without their fabricated identifiers, neither vague statement is what a source says: both are
    # removed and the answer abstains, saying why.
    assert [item["text"] for item in result.claims_removed] == ["Dapagliflozin works.", "It is safe."]
    assert (result.abstained, result.abstention["reason"], result.references) == (True, "claims_unsupported", [])


def test_tool_call_round_trip_answers_with_matching_tool_call_ids(
    library, fake_openai, llm_settings, eutils, eutils_recording
):
    eutils.expect_request("/entrez/eutils/efetch.fcgi").respond_with_data(
        eutils_recording("biomcp/efetch_pubmed_22663011.xml"), content_type="text/xml"
    )
    fake_openai.script(
        Reply([ToolUse(id="call_abc", name="get_pubmed_article", input={"pmid": "22663011"})], stop_reason="tool_use"),
        Reply([Text("Trametinib improved survival [citation:pmid:22663011:abstract].")]),
    )
    result = answer_question(question=QUESTION, settings=llm_settings("openai"))
    messages = fake_openai.requests[1]["messages"]
    assert messages[-2]["tool_calls"] == [
        {
            "id": "call_abc",
            "type": "function",
            "function": {"name": "get_pubmed_article", "arguments": '{"pmid": "22663011"}'},
        }
    ]
    assert (messages[-1]["role"], messages[-1]["tool_call_id"]) == ("tool", "call_abc")
    assert pmids(result) == ["22663011"]


def test_malformed_tool_arguments_are_answered_with_an_error_result(library, fake_openai, llm_settings):
    fake_openai.script(
        Reply([ToolUse(id="call_1", name="search_pubmed", raw_json="{'query': apixaban}")], stop_reason="tool_use"),
        Reply(
            [Text(f"Dapagliflozin reduced worsening heart failure events or cardiovascular death (PMID {DELIVER}).")]
        ),
    )
    result = answer_question(question=QUESTION, settings=llm_settings("openai"))
    tool_message = fake_openai.requests[1]["messages"][-1]
    assert "Invalid call to search_pubmed: the arguments are not valid JSON" in tool_message["content"]
    assert result.tool_calls[0]["is_error"] is True
    assert pmids(result) == [DELIVER]


def test_timeout_gives_a_clear_message_when_fallback_is_off(library, fake_openai, llm_settings):
    fake_openai.script(Reply([Text("Late.")], delay=1.5))
    result = answer_question(
        question=QUESTION, settings=llm_settings("openai", timeout_seconds=0.4, fallback_to_extractive=False)
    )
    assert result.error["code"] == "llm_timeout"
    assert result.answer.startswith(
        "The language model could not answer (The OpenAI-compatible server did not answer within 0.4 s"
    )
    assert result.abstained is True


@pytest.mark.parametrize(
    ("step", "code"),
    [
        (HttpError(503, "server_error", "model is loading"), "llm_server_error"),
        (HttpError(404, "not_found", "model 'llama-test' not found"), "llm_bad_request"),
        (StreamError("Partial ", "server_error", "out of memory"), "llm_server_error"),
        (Garbage("<html>502 Bad Gateway</html>", content_type="text/html"), "llm_malformed_output"),
    ],
)
def test_server_failures_fall_back_to_a_cited_extractive_answer(library, fake_openai, llm_settings, step, code):
    fake_openai.script(step)
    result = answer_question(question=QUESTION, settings=llm_settings("openai"))
    assert result.error["code"] == code
    assert result.provider == "extractive"
    assert EMPEROR in pmids(result) and DELIVER in pmids(result)
    assert result.confidence == "GREEN"
