"""The tray and AI columns on TrialScout: page rendering, streamed asking, Accept / Dismiss, columns, progress."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import lxml.html
import pytest

from chat.models import Conversation, Message, MessageRole
from research.ai_columns import LLM_REQUIRED_MESSAGE
from research.models import AIColumn, AIColumnResult, AIColumnRun
from tests.chat.fakes import Reply, Text
from tests.chat.test_views import parse_sse
from tests.factories import UserFactory
from tests.research.conftest import MELANOMA, MELANOMA_NCTS
from tests.research.factories import AIColumnFactory, AIColumnResultFactory
from tests.research.fakes import record_id

pytestmark = pytest.mark.django_db
STATE = "condition=melanoma&status=RECRUITING"
TRIAL_SEARCH = {
    "condition": "melanoma",
    "phase": ["PHASE3"],
    "status": ["RECRUITING"],
    "explanation": "Recruiting phase 3 melanoma trials.",
}
COLUMN = {"name": "Over 65", "criteria": "Does it enrol adults over 65?", "type": "boolean", "explanation": "x"}


def page(response) -> lxml.html.HtmlElement:
    return lxml.html.fromstring(response.content.decode())


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def suggestion_message(user, *payloads: tuple[str, dict]) -> Message:
    conversation = Conversation.objects.create(user=user, app="trialscout")
    return Message.objects.create(
        conversation=conversation,
        role=MessageRole.ASSISTANT,
        content="Here you are.",
        extras={
            "payloads": [
                {"id": f"p{n}", "type": kind, "data": data, "state": "pending"}
                for n, (kind, data) in enumerate(payloads, start=1)
            ]
        },
    )


def test_anonymous_visitors_are_sent_to_log_in_before_any_trial_search(client, ctgov) -> None:
    response = client.get("/trialscout/", {"condition": "melanoma"})

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/trialscout/%3Fcondition%3Dmelanoma"
    assert ctgov.log == []


def test_the_page_carries_its_state_into_the_tray_and_ai_forms(logged_in, melanoma_search) -> None:
    html = page(logged_in.get(f"/trialscout/?{STATE}"))

    states = {element.get("value") for element in html.cssselect("input[data-page-state]")}
    assert states == {STATE}
    assert html.cssselect("form[data-tray-form]")[0].get("action") == "/chat/research/trialscout/ask/"
    assert [row.get("data-item") for row in html.cssselect("#trial-results tbody tr")] == MELANOMA_NCTS
    assert html.cssselect('script[src="/static/js/research.js"]')


def test_without_a_model_the_page_says_why_columns_cannot_be_added(logged_in, melanoma_search) -> None:
    html = page(logged_in.get(f"/trialscout/?{STATE}"))

    banner = html.cssselect(".ai-unavailable")[0].text_content()
    assert banner == LLM_REQUIRED_MESSAGE == (
        "AI columns are not available: they need a language model, and none is switched on in this MedCite. "
        "An administrator can enable one. Until then, the chat tray still builds searches and answers questions "
        "from the loaded rows."
    )
    shown = html.text_content()
    for operator_detail in ("LLM_PROVIDER", "API_KEY", "BASE_URL", "restart", "extractive"):
        assert operator_detail not in shown
    assert html.cssselect(".ai-column-add button[type=submit]")[0].get("disabled") is not None


def test_asking_streams_the_reply_and_renders_its_cards(logged_in, melanoma_search, user) -> None:
    response = logged_in.post(
        "/chat/research/trialscout/ask/?stream=1",
        {"question": "find phase 2 melanoma trials that are recruiting", "state": STATE},
    )

    assert response["Content-Type"] == "text/event-stream"
    events = parse_sse(b"".join(response.streaming_content).decode())
    names = [name for name, _ in events]
    assert names[0] == "meta" and names[-1] == "done"
    assert [data["message"] for name, data in events if name == "status"] == [
        "Reading the TrialScout page",
        "Building a suggestion",
    ]
    conversation = Conversation.objects.get(user=user, app="trialscout")
    assert events[0][1]["conversation_id"] == conversation.pk
    done = events[-1][1]
    card = lxml.html.fromstring(done["html"]).cssselect("[data-payload-card=trial_search_suggestion]")[0]
    assert card.cssselect("dd")[0].text_content() == "melanoma"
    assert [form.get("action") for form in card.cssselect("form")] == [
        f"/chat/research/messages/{done['message_id']}/payloads/p1/accept/",
        f"/chat/research/messages/{done['message_id']}/payloads/p1/dismiss/",
    ]
    assert {element.get("value") for element in card.cssselect("input[name=state]")} == {STATE}
    assert "".join(data["text"] for name, data in events if name == "delta").startswith("Here is a ClinicalTrials")


def test_asking_without_javascript_redirects_back_to_the_answer(logged_in, melanoma_search, user) -> None:
    response = logged_in.post("/chat/research/trialscout/ask/", {"question": "Which are recruiting?", "state": STATE})

    answer = Message.objects.get(role=MessageRole.ASSISTANT, conversation__user=user)
    assert response.status_code == 302
    assert response["Location"] == f"/trialscout/?{STATE}#message-{answer.pk}"
    html = page(logged_in.get(f"/trialscout/?{STATE}"))
    assert (
        html.cssselect(f"#message-{answer.pk} .chat-answer")[0]
        .text_content()
        .startswith("3 of the 3 loaded trials match Recruiting:")
    )
    # The tray's steps have no reader's sentence yet: each shows its line whole, nothing folded away.
    steps = [li.text_content() for li in html.cssselect(f"#message-{answer.pk} .chat-trace li")]
    assert any(step.startswith("Wrote the reply: Computed from the loaded rows") for step in steps), steps
    assert not html.cssselect(f"#message-{answer.pk} .chat-trace li .trace-detail")


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        ({"question": "", "state": STATE}, 400, "Type a question first: the question is empty."),
        ({"question": "x" * 4001, "state": STATE}, 400, "The question is 4001 characters long; the limit is 4000."),
    ],
)
def test_a_bad_question_is_a_json_error_and_stores_nothing(logged_in, data, status, message) -> None:
    response = logged_in.post("/chat/research/trialscout/ask/?stream=1", data)

    assert response.status_code == status
    assert response.json()["error"]["message"].startswith(message)
    assert Message.objects.count() == 0


def test_an_unknown_page_is_404(logged_in) -> None:
    assert logged_in.post("/chat/research/library/ask/", {"question": "hi"}).status_code == 404


def test_accepting_a_trial_search_records_it_and_opens_the_filled_form(logged_in, user) -> None:
    message = suggestion_message(user, ("trial_search_suggestion", TRIAL_SEARCH))

    response = logged_in.post(
        f"/chat/research/messages/{message.pk}/payloads/p1/accept/", {"state": STATE}, HTTP_ACCEPT="application/json"
    )

    assert response.status_code == 200
    assert response.json()["redirect"] == "/trialscout/?condition=melanoma&phase=PHASE3&status=RECRUITING"
    message.refresh_from_db()
    payload = message.extras["payloads"][0]
    assert payload["state"] == "accepted"
    assert payload["decided_at"]
    again = logged_in.post(
        f"/chat/research/messages/{message.pk}/payloads/p1/dismiss/", {"state": STATE}, HTTP_ACCEPT="application/json"
    )
    assert again.status_code == 409
    assert again.json() == {
        "error": {
            "code": "already_decided",
            "message": "This suggestion was already accepted; it cannot be decided again.",
        }
    }


def test_dismissing_without_javascript_redirects_back_to_the_tray(logged_in, user) -> None:
    message = suggestion_message(user, ("trial_search_suggestion", TRIAL_SEARCH))

    response = logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p1/dismiss/", {"state": STATE})

    assert response.status_code == 302
    assert response["Location"] == f"/trialscout/?{STATE}#tray"
    message.refresh_from_db()
    assert message.extras["payloads"][0]["state"] == "dismissed"


def test_another_users_suggestion_cannot_be_decided(logged_in) -> None:
    message = suggestion_message(UserFactory(username="someone-else"), ("trial_search_suggestion", TRIAL_SEARCH))

    response = logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p1/accept/", {"state": STATE})

    assert response.status_code == 404
    message.refresh_from_db()
    assert message.extras["payloads"][0]["state"] == "pending"


def test_a_trial_card_is_information_only(logged_in, user) -> None:
    message = suggestion_message(user, ("trial_details", {"type": "trial_details", "nct_id": "NCT04114136"}))

    response = logged_in.post(
        f"/chat/research/messages/{message.pk}/payloads/p1/accept/", HTTP_ACCEPT="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"] == "A trial details card is information only; nothing to accept."


def test_accepting_an_ai_column_without_a_model_is_refused_and_nothing_is_recorded(logged_in, user) -> None:
    message = suggestion_message(user, ("ai_column_suggestion", COLUMN))

    response = logged_in.post(
        f"/chat/research/messages/{message.pk}/payloads/p1/accept/", {"state": STATE}, HTTP_ACCEPT="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"] == {"code": "llm_required", "message": LLM_REQUIRED_MESSAGE}
    message.refresh_from_db()
    assert message.extras["payloads"][0]["state"] == "pending"
    assert AIColumn.objects.count() == 0


def test_accepting_an_ai_column_adds_it_and_evaluates_the_rows_shown(
    logged_in, user, research_llm, melanoma_search, study_records, django_capture_on_commit_callbacks
) -> None:
    study_records({nct_id: MELANOMA for nct_id in MELANOMA_NCTS})
    research_llm.judge = lambda prompt: {
        "value": "yes" if record_id(prompt) == "NCT04114136" else "no",
        "justification": f"Checked {record_id(prompt)}.",
    }
    message = suggestion_message(user, ("ai_column_suggestion", COLUMN))

    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(
            f"/chat/research/messages/{message.pk}/payloads/p1/accept/",
            {"state": STATE},
            HTTP_ACCEPT="application/json",
        )

    body = response.json()
    column = AIColumn.objects.get(user=user)
    assert (column.name, column.criteria, column.kind, column.source_message_id) == (
        "Over 65",
        "Does it enrol adults over 65?",
        "boolean",
        message.pk,
    )
    assert body["column"] == {"id": column.pk, "name": "Over 65", "kind": "boolean"}
    assert body["redirect"] == f"/trialscout/?{STATE}#ai-columns"
    run = AIColumnRun.objects.get(pk=body["run"]["id"])
    assert (run.status, run.done, run.total) == ("succeeded", 3, 3)
    status = logged_in.get(f"/chat/research/runs/{run.pk}/").json()
    assert status["progress"] == 1.0
    assert status["results"]["NCT04114136"] == {"value": "yes", "label": "Yes", "justification": "Checked NCT04114136."}
    # The page shows the cells, their justification on hover, and filters by them.
    html = page(logged_in.get(f"/trialscout/?{STATE}&ai_{column.pk}=yes"))
    [row] = html.cssselect("#trial-results tbody tr")
    assert row.get("data-item") == "NCT04114136"
    cell = row.cssselect("td.ai-cell")[0]
    assert (cell.get("data-ai-value"), cell.get("title")) == ("yes", "Checked NCT04114136.")
    assert cell.cssselect(".ai-value")[0].text_content() == "Yes"
    everything = page(logged_in.get(f"/trialscout/?{STATE}"))
    assert [c.get("data-ai-value") for c in everything.cssselect("td.ai-cell")] == ["no", "yes", "no"]
    assert [a.text_content() for a in everything.cssselect(f"a[data-ai-filter='{column.pk}']")] == [
        "All",
        "Yes",
        "No",
        "Unclear",
    ]


def test_adding_a_column_by_hand_and_evaluating_new_rows(
    logged_in, user, research_llm, melanoma_search, study_records, django_capture_on_commit_callbacks
) -> None:
    study_records({nct_id: MELANOMA for nct_id in MELANOMA_NCTS})
    research_llm.judge = lambda prompt: {"value": "n = 30", "justification": "Enrollment field."}

    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(
            "/chat/research/trialscout/columns/",
            {"name": "Size", "criteria": "How many participants?", "kind": "text", "state": STATE},
        )

    assert response.status_code == 302
    assert response["Location"] == f"/trialscout/?{STATE}#ai-columns"
    column = AIColumn.objects.get(user=user, name="Size")
    assert AIColumnResult.objects.filter(column=column).count() == 3
    AIColumnResult.objects.filter(column=column, item_id="NCT04318717").delete()
    with django_capture_on_commit_callbacks(execute=True):
        evaluated = logged_in.post(
            f"/chat/research/columns/{column.pk}/evaluate/", {"state": STATE}, HTTP_ACCEPT="application/json"
        )
    assert evaluated.json()["run"]["total"] == 1
    assert len(research_llm.row_requests) == 4
    html = page(logged_in.get(f"/trialscout/?{STATE}"))
    assert [c.text_content() for c in html.cssselect("td.ai-cell .ai-value")] == ["n = 30"] * 3


def test_adding_a_column_without_a_model_shows_why_on_the_page(logged_in, user, melanoma_search) -> None:
    response = logged_in.post(
        "/chat/research/trialscout/columns/",
        {"name": "RCT", "criteria": "Is it randomised?", "kind": "boolean", "state": STATE},
        follow=True,
    )

    assert AIColumn.objects.count() == 0
    assert LLM_REQUIRED_MESSAGE in [element.text_content() for element in page(response).cssselect(".messages li")]


def test_bad_column_fields_are_a_json_error(logged_in, research_llm) -> None:
    response = logged_in.post(
        "/chat/research/trialscout/columns/",
        {"name": "", "criteria": "?", "kind": "boolean"},
        HTTP_ACCEPT="application/json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "Give the column a short name, e.g. RCT or Enrolls over-65s. Write the criterion as a question, e.g. Is this "
        "a randomized controlled trial?"
    )


def test_run_progress_and_columns_belong_to_their_user(logged_in, user) -> None:
    column = AIColumnFactory(user=UserFactory(username="someone-else"))
    run = AIColumnRun.objects.create(column=column, item_ids=["NCT04114136"], total=1)

    assert logged_in.get(f"/chat/research/runs/{run.pk}/").status_code == 404
    assert logged_in.post(f"/chat/research/columns/{column.pk}/delete/").status_code == 404
    assert AIColumn.objects.filter(pk=column.pk).exists()


def test_removing_a_column_drops_its_cells(logged_in, user, melanoma_search) -> None:
    column = AIColumnFactory(user=user, name="Gone")
    AIColumnResultFactory(column=column, item_id="NCT04114136")

    response = logged_in.post(f"/chat/research/columns/{column.pk}/delete/", {"state": STATE})

    assert response["Location"] == f"/trialscout/?{STATE}#ai-columns"
    assert AIColumnResult.objects.count() == 0
    assert page(logged_in.get(f"/trialscout/?{STATE}")).cssselect("td.ai-cell") == []


def test_a_run_in_progress_shows_a_progress_bar_that_polls(logged_in, user, melanoma_search) -> None:
    column = AIColumnFactory(user=user)
    run = AIColumnRun.objects.create(column=column, item_ids=MELANOMA_NCTS, total=3, done=1, status="running")

    html = page(logged_in.get(f"/trialscout/?{STATE}"))

    holder = html.cssselect("[data-ai-run]")[0]
    assert holder.get("data-ai-run") == f"/chat/research/runs/{run.pk}/"
    bar = holder.cssselect("progress")[0]
    assert (bar.get("value"), bar.get("max")) == ("1", "3")
    assert [cell.text_content() for cell in html.cssselect("td.ai-cell")] == ["…", "…", "…"]


def test_the_tray_keeps_the_conversation_across_searches(logged_in, user, melanoma_search) -> None:
    logged_in.post("/chat/research/trialscout/ask/", {"question": "Which are recruiting?", "state": STATE})
    logged_in.post("/chat/research/trialscout/ask/", {"question": "How many are there?", "state": STATE})

    html = page(logged_in.get("/trialscout/?" + urlencode({"condition": "melanoma"})))

    assert Conversation.objects.filter(user=user, app="trialscout").count() == 1
    assert [q.text_content() for q in html.cssselect("#tray-thread .chat-question")] == [
        "Which are recruiting?",
        "How many are there?",
    ]
    new = logged_in.post("/chat/research/trialscout/new/", {"state": STATE})
    assert new["Location"] == f"/trialscout/?{STATE}#tray"
    assert page(logged_in.get(f"/trialscout/?{STATE}")).cssselect("#tray-thread .chat-question") == []
    assert Conversation.objects.filter(user=user, app="trialscout").count() == 2


def test_the_streamed_preview_never_shows_payload_text(logged_in, research_llm, melanoma_search) -> None:
    research_llm.script(
        Reply(
            [
                Text(
                    "Here is a phase 3 search. Try this search.\n"
                    "TRIAL_SEARCH_SUGGESTION: "
                    + json.dumps(TRIAL_SEARCH)
                    + "\nAccept it to keep recruiting trials only."
                )
            ]
        )
    )

    response = logged_in.post(
        "/chat/research/trialscout/ask/?stream=1", {"question": "Narrow this to phase 3", "state": STATE}
    )

    events = parse_sse(b"".join(response.streaming_content).decode())
    preview = "".join(data["text"] for name, data in events if name == "delta")
    assert preview == "Here is a phase 3 search. Try this search.\n"
    done = lxml.html.fromstring(events[-1][1]["html"])
    assert done.cssselect(".chat-answer")[0].text_content().strip() == (
        "Here is a phase 3 search. Try this search.\nAccept it to keep recruiting trials only."
    )
    assert len(done.cssselect("[data-payload-card=trial_search_suggestion]")) == 1


def test_the_page_query_count_does_not_grow_with_rows_or_columns(
    logged_in, user, melanoma_search, django_assert_num_queries
) -> None:
    for name in ("One", "Two", "Three"):
        column = AIColumnFactory(user=user, name=name)
        for nct_id in MELANOMA_NCTS:
            AIColumnResultFactory(column=column, item_id=nct_id)
        AIColumnRun.objects.create(column=column, item_ids=MELANOMA_NCTS, total=3, done=3, status="succeeded")
    logged_in.post("/chat/research/trialscout/ask/", {"question": "Which are recruiting?", "state": STATE})

    # session + user, conversation, its messages, columns, cached values, latest runs
    with django_assert_num_queries(7):
        response = logged_in.get(f"/trialscout/?{STATE}")

    assert len(page(response).cssselect("td.ai-cell")) == 9
