"""The tray's replies: rules without a language model, the LLM with page tools and payloads, all verified."""

from __future__ import annotations

import json

import pytest

from chat.models import Conversation, MessageRole
from evidence.models import Tag
from research import reply as reply_module
from research.ai_columns import LLM_REQUIRED_MESSAGE
from research.registries import page_get, payload_type_get
from research.reply import tray_reply
from tests.chat.fakes import HttpError, Reply, Text, ToolUse
from tests.research.conftest import MELANOMA, MELANOMA_NCTS

pytestmark = pytest.mark.django_db
TRIALSCOUT = page_get("trialscout")
TABLIZER = page_get("tablizer")
STATE = "condition=melanoma&status=RECRUITING"


@pytest.fixture
def vocabulary(db) -> None:
    Tag.objects.create(
        code="non_small_cell_lung",
        kind="disease",
        label="non-small cell lung cancer",
        synonyms=["non-small cell lung cancer", "NSCLC"],
        mesh_terms=["Carcinoma, Non-Small-Cell Lung"],
    )
    Tag.objects.create(
        code="af", kind="disease", label="atrial fibrillation", synonyms=["AF"], mesh_terms=["Atrial Fibrillation"]
    )


def ask(user, page, text: str, state: str = STATE):
    conversation = Conversation.objects.create(user=user, app=page.name)
    return tray_reply(conversation=conversation, page=page, state=state, text=text, user=user)


def test_without_a_model_the_rule_built_trial_search_keeps_the_intervention_class(ctgov, vocabulary, user) -> None:
    message = ask(user, TRIALSCOUT, "phase 3 NSCLC immunotherapy trials", state="")

    (payload,) = message.extras["payloads"]
    assert payload["data"] == {
        "condition": "non-small cell lung cancer",
        "intervention": "immunotherapy",
        "phase": ["PHASE3"],
        "explanation": "Searches ClinicalTrials.gov for phase 3 trials of immunotherapy in non-small cell lung cancer.",
    }
    assert payload_type_get("trial_search_suggestion").url_for(payload["data"]) == (
        "/trialscout/?condition=non-small+cell+lung+cancer&intervention=immunotherapy&phase=PHASE3"
    )


def test_without_a_model_a_search_request_gets_a_rule_built_trial_search(ctgov, vocabulary, user) -> None:
    message = ask(user, TRIALSCOUT, "phase 3 NSCLC trials that are recruiting", state="")

    assert message.role == MessageRole.ASSISTANT
    assert message.content == (
        "Here is a ClinicalTrials.gov search for your request. Searches ClinicalTrials.gov for phase 3 trials in "
        "non-small cell lung cancer that are recruiting. Accept it to run the search, or dismiss it to keep the "
        "current results."
    )
    assert message.extras["payloads"] == [
        {
            "id": "p1",
            "type": "trial_search_suggestion",
            "data": {
                "condition": "non-small cell lung cancer",
                "phase": ["PHASE3"],
                "status": ["RECRUITING"],
                "explanation": "Searches ClinicalTrials.gov for phase 3 trials in non-small cell lung cancer that are "
                "recruiting.",
            },
            "state": "pending",
        }
    ]
    assert (message.extras["provider"], message.extras["intent"], message.extras["confidence"]) == (
        "extractive",
        "search",
        "",
    )
    assert [step["step"] for step in message.extras["trace"]] == ["context", "generate", "verify"]
    question = message.conversation.messages.get(role=MessageRole.USER)
    assert question.context == {"page": "trialscout", "state": ""}
    assert ctgov.log == []


def test_without_a_model_a_pubmed_request_gets_mesh_terms_from_the_vocabulary(eutils, vocabulary, user) -> None:
    message = ask(user, TABLIZER, "find meta-analyses on anticoagulation in AF", state="")

    [payload] = message.extras["payloads"]
    assert payload["type"] == "pubmed_query_suggestion"
    assert payload["data"]["query"] == (
        '("AF"[Title/Abstract] OR "atrial fibrillation"[Title/Abstract] OR "Atrial Fibrillation"[MeSH Terms]) AND '
        '"anticoagulation"[Title/Abstract] AND "Meta-Analysis"[Publication Type]'
    )


def test_without_a_model_questions_about_the_rows_are_answered_with_citations(melanoma_search, user) -> None:
    message = ask(user, TRIALSCOUT, "Which of these are not applicable phase?")

    assert message.content.splitlines()[0] == "1 of the 3 loaded trials matches Not applicable:"
    assert message.content.splitlines()[1] == "- Resistance Exercise in Patients With Ocular Melanoma [1]"
    assert [(ref["n"], ref["nct"]) for ref in message.extras["references"]] == [(1, "NCT06970236")]
    assert message.extras["payloads"] == []
    assert message.extras["intent"] == "analyse"


def test_without_a_model_an_overview_cites_examples_of_each_value(melanoma_search, user) -> None:
    message = ask(user, TRIALSCOUT, "Give me an overview of the phases and statuses")

    assert message.content.splitlines() == [
        "3 trials are loaded of 480 matching the search.",
        "",
        "By phase:",
        "- Phase 2: 2 trials, for example Anti-PD-1 mAb Plus Metabolic Modulator in Solid Tumor Malignancies [1]; "
        "Pembrolizumab and Hypofractionated Radiation Therapy for the… [2].",
        "- Not applicable: 1 trial, for example Resistance Exercise in Patients With Ocular Melanoma [3].",
        "",
        "By status:",
        "- Recruiting: 3 trials, for example Resistance Exercise in Patients With Ocular Melanoma [3]; Anti-PD-1 "
        "mAb Plus Metabolic Modulator in Solid Tumor Malignancies [1].",
    ]
    assert [ref["nct"] for ref in message.extras["references"]] == ["NCT04114136", "NCT04318717", "NCT06970236"]
    assert message.extras["confidence"] == "GREEN"


def test_without_a_model_an_ai_column_request_says_why_it_cannot_be_done(melanoma_search, user) -> None:
    message = ask(user, TRIALSCOUT, "Add a column that flags trials enrolling over-65s")

    assert message.content == LLM_REQUIRED_MESSAGE
    assert message.extras["payloads"] == []


def test_with_a_model_the_page_state_tools_and_payloads_reach_it_and_come_back_verified(
    research_llm, melanoma_search, user
) -> None:
    research_llm.script(
        Reply(
            [
                Text(
                    "One loaded trial combines an anti-PD-1 antibody with a metabolic modulator "
                    "[citation:nct:NCT04114136:summary]. It cured melanoma in every patient "
                    "[citation:nct:NCT04114136:summary]. One registry study was retracted (PMID: 99999999).\n\n"
                    "TRIAL_SEARCH_SUGGESTION:\n```json\n"
                    + json.dumps(
                        {
                            "condition": "melanoma",
                            "intervention": "pembrolizumab",
                            "phase": ["Phase 3"],
                            "status": ["Recruiting"],
                            "explanation": "Narrows to phase 3 pembrolizumab trials.",
                        }
                    )
                    + "\n```\n"
                    'AI_COLUMN_SUGGESTION: {"name": "PD-1", "criteria": "Tests a PD-1 inhibitor?", "type": "number", '
                    '"explanation": "x"}\n'
                    "Accept the search to see them."
                )
            ]
        )
    )

    message = ask(user, TRIALSCOUT, "Which of these test immunotherapy, and what should I search next?")

    request = research_llm.requests[0]
    assert request["messages"][-1]["content"] == (
        "Question asked on the TrialScout page: Which of these test immunotherapy, and what should I search next?"
    )
    assert "PAGE STATE\nPAGE: TrialScout" in request["system"]
    assert "Counts: 480 trials match in ClinicalTrials.gov; 3 loaded on the page." in request["system"]
    assert "TRIAL_SEARCH_SUGGESTION:" in request["system"] and "AI_COLUMN_SUGGESTION:" in request["system"]
    assert "PUBMED_QUERY_SUGGESTION" not in request["system"]
    assert [tool["name"] for tool in request["tools"]] == ["get_trial"]
    assert message.content.splitlines() == [
        "One loaded trial combines an anti-PD-1 antibody with a metabolic modulator [1].",
        "",
        "Accept the search to see them.",
    ]
    assert [removal["text"] for removal in message.extras["claims_removed"]] == [
        "It cured melanoma in every patient.",
        "One registry study was retracted.",
    ]
    assert [ref["nct"] for ref in message.extras["references"]] == ["NCT04114136"]
    assert [item["value"] for item in message.extras["removed"]] == ["99999999"]
    assert [(p["type"], p["data"]["phase"], p["data"]["status"]) for p in message.extras["payloads"]] == [
        ("trial_search_suggestion", ["PHASE3"], ["RECRUITING"])
    ]
    assert [(d["type"], d["reason"]) for d in message.extras["dropped_payloads"]] == [
        ("ai_column_suggestion", "type: 'number' is not one of ['boolean', 'text']")
    ]
    assert message.context["in_prompt"] == 3
    assert message.context["holding_pen"] == ""


def test_rows_beyond_the_prompt_are_read_through_the_holding_pen(
    research_llm, melanoma_search, user, monkeypatch
) -> None:
    monkeypatch.setattr(reply_module, "PROMPT_ITEMS", 1)
    research_llm.script(
        Reply([ToolUse("call_1", "get_staged_items", {"offset": 1})], stop_reason="tool_use"),
        Reply(
            [
                Text(
                    "The last loaded trial tests pembrolizumab with hypofractionated radiation therapy for mucosal "
                    "melanoma [citation:nct:NCT04318717:summary]."
                )
            ]
        ),
    )

    message = ask(user, TRIALSCOUT, "What does the last trial study?")

    first, second = research_llm.requests
    assert "First 1 of 3 loaded trials" in first["system"]
    assert "The other 2 loaded trials are staged: call get_staged_items (offset 1" in first["system"]
    assert [tool["name"] for tool in first["tools"]] == ["get_trial", "get_staged_items"]
    tool_result = second["messages"][-1]["content"][0]["content"]
    assert "Rows 2-3 of 3:" in tool_result
    assert "3. NCT04318717 | Pembrolizumab and Hypofractionated Radiation Therapy" in tool_result
    assert [ref["nct"] for ref in message.extras["references"]] == ["NCT04318717"]
    assert message.extras["tool_calls"][0]["name"] == "get_staged_items"
    assert message.context["holding_pen"] != ""
    assert message.context["in_prompt"] == 1


def test_a_trial_the_model_fetched_becomes_a_trial_details_card(
    research_llm, melanoma_search, study_records, user
) -> None:
    study_records({"NCT04114136": MELANOMA})
    research_llm.script(
        Reply([ToolUse("call_1", "get_trial", {"nct_id": "NCT04114136"})], stop_reason="tool_use"),
        Reply(
            [
                Text(
                    "NCT04114136 combines an anti-PD-1 antibody with a metabolic modulator "
                    "[citation:nct:NCT04114136:registry]."
                )
            ]
        ),
    )

    message = ask(user, TRIALSCOUT, "Tell me about NCT04114136")

    [card] = message.extras["payloads"]
    assert (card["type"], card["data"]["nct_id"], card["state"]) == ("trial_details", "NCT04114136", "pending")
    assert card["data"]["brief_title"] == "Anti-PD-1 mAb Plus Metabolic Modulator in Solid Tumor Malignancies"
    assert message.extras["references"][0]["nct"] == "NCT04114136"


def test_when_the_model_fails_the_rules_answer_with_a_notice(research_llm, melanoma_search, user) -> None:
    research_llm.script(HttpError(529, "overloaded_error", "Overloaded"))

    message = ask(user, TRIALSCOUT, "Which of these are recruiting?")

    assert message.content.startswith("3 of the 3 loaded trials match Recruiting:")
    assert message.extras["provider"] == "extractive"
    assert message.extras["error"]["notice"].startswith("The language model could not answer (Anthropic is overloaded")
    assert message.extras["error"]["notice"].endswith("; this reply was built by rules.")


def test_with_fallback_off_a_failed_model_gets_chat_s_message_not_a_rules_reply(
    research_llm, melanoma_search, user, settings
) -> None:
    """One fall-back rule for chat and the trays: `fallback_to_extractive` off means no answer built without it."""
    settings.ANSWER_SETTINGS = {**settings.ANSWER_SETTINGS, "fallback_to_extractive": False}
    research_llm.script(HttpError(529, "overloaded_error", "Overloaded"))

    message = ask(user, TRIALSCOUT, "Which of these are recruiting?")

    assert message.content.startswith("The language model could not answer (Anthropic is overloaded")
    assert message.content.endswith("Your question is saved; please try again in a moment.")
    assert message.extras["references"] == [] and message.extras["confidence"] == ""
    assert message.extras["error"]["code"] and message.extras["error"]["notice"] == message.content


def test_an_empty_question_stores_nothing(user) -> None:
    conversation = Conversation.objects.create(user=user, app="trialscout")

    with pytest.raises(Exception, match="Type a question first"):
        tray_reply(conversation=conversation, page=TRIALSCOUT, state="", text="  ", user=user)
    assert conversation.messages.count() == 0


def test_a_count_about_the_loaded_rows_is_green_with_its_reasons_and_trace(melanoma_search, user) -> None:
    message = ask(user, TRIALSCOUT, "How many of these trials are recruiting?")

    assert message.content.splitlines()[0] == "3 of the 3 loaded trials match Recruiting:"
    assert [ref["nct"] for ref in message.extras["references"]] == MELANOMA_NCTS
    assert message.extras["names_rows"] is True
    assert (message.extras["confidence"], message.extras["confidence_reasons"]) == (
        "GREEN",
        ["computed from all 3 loaded trials; the 3 that address the question are cited"],
    )
    assert [step["step"] for step in message.extras["trace"]] == ["context", "generate", "verify", "confidence"]
    assert message.extras["trace"][-1]["detail"] == (
        "GREEN: computed from all 3 loaded trials; the 3 that address the question are cited. "
        "Computed from the loaded rows"
    )


def test_a_count_over_part_of_the_search_results_is_yellow_and_says_why(melanoma_search, user) -> None:
    message = ask(user, TRIALSCOUT, "How many trials are recruiting?")

    assert message.content.split("\n\n")[-1] == (
        "Not checked: only the 3 loaded trials were read; the search matched 480."
    )
    assert (message.extras["confidence"], message.extras["confidence_reasons"]) == (
        "YELLOW",
        ["computed from the 3 loaded trials, in part", "only the 3 loaded trials were read; the search matched 480"],
    )


@pytest.mark.parametrize(
    ("page", "state", "question", "content", "reason"),
    [
        (
            TRIALSCOUT,
            STATE,
            "Which of these are RCTs?",
            "None of the 3 loaded trials records a publication type, so I cannot tell which match Randomized "
            "Controlled Trial. Ask about what the rows show, or run a search that has it.",
            "no loaded trial records a publication type",
        ),
        (
            TABLIZER,
            "",
            "How many of the loaded articles are about breast cancer?",
            "No articles are loaded yet, so I cannot answer about them. Run a search first, or ask me to build one.",
            "no articles are loaded",
        ),
    ],
)
def test_a_question_the_rows_cannot_answer_is_red_and_says_so(
    melanoma_search, user, page, state, question, content, reason
) -> None:
    message = ask(user, page, question, state=state)

    assert message.content == content
    assert (message.extras["confidence"], message.extras["confidence_reasons"]) == ("RED", [reason])
    assert message.extras["references"] == []


def test_a_model_reply_citing_rows_off_the_topic_is_not_green(research_llm, melanoma_search, user) -> None:
    research_llm.script(
        Reply(
            [
                Text(
                    "One loaded trial combines an anti-PD-1 antibody with a metabolic modulator "
                    "[citation:nct:NCT04114136:summary]."
                )
            ]
        )
    )

    message = ask(user, TRIALSCOUT, "Which of these trials test apixaban in atrial fibrillation?")

    assert message.content == "One loaded trial combines an anti-PD-1 antibody with a metabolic modulator [1]."
    assert (message.extras["confidence"], message.extras["confidence_reasons"]) == (
        "RED",
        ["none of the cited sources addresses the question"],
    )
    assert message.extras["trace"][-1]["step"] == "confidence"
