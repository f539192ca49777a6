"""AI columns: validation, the evaluation job against a fake LLM server, progress, caching, row failures."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.core.exceptions import ValidationError

from research.ai_column_runs import ai_column_run_start
from research.ai_columns import (
    LLM_REQUIRED_MESSAGE,
    RowAnswerInvalid,
    ai_column_create,
    ai_column_run_execute,
    check_ai_column,
    parse_row_answer,
    run_status,
)
from research.models import AIColumn, AIColumnResult, AIColumnRun, AIColumnRunStatus
from tests.chat.fakes import HttpError
from tests.research.conftest import MELANOMA, MELANOMA_NCTS
from tests.research.factories import AIColumnFactory, AIColumnResultFactory
from tests.research.fakes import record_id

ANSWERS = {
    "NCT06970236": {"value": "no", "justification": "Eligibility allows ages 18 to 64 only."},
    "NCT04114136": {"value": "yes", "justification": "Adults 18 years and older, no upper age limit."},
    "NCT04318717": {"value": "Unclear", "justification": "The record does not state an age range.\nSecond line."},
}


@pytest.fixture
def melanoma_records(study_records) -> None:
    study_records({nct_id: MELANOMA for nct_id in MELANOMA_NCTS})


def judge_from(answers: dict) -> callable:
    return lambda prompt: answers[record_id(prompt)]


@pytest.mark.django_db
def test_a_run_evaluates_every_row_and_caches_the_answers(research_llm, melanoma_records, user) -> None:
    research_llm.judge = judge_from(ANSWERS)
    column = AIColumnFactory(user=user, criteria="Does the trial enrol adults over 65?")
    run = ai_column_run_start(column=column, item_ids=MELANOMA_NCTS)

    finished = ai_column_run_execute(run_id=run.pk)

    assert (finished.status, finished.total, finished.done, finished.failed, finished.errors) == (
        AIColumnRunStatus.SUCCEEDED,
        3,
        3,
        0,
        [],
    )
    assert finished.progress == 1.0
    assert sorted(AIColumnResult.objects.filter(column=column).values_list("item_id", "value", "justification")) == [
        ("NCT04114136", "yes", "Adults 18 years and older, no upper age limit."),
        ("NCT04318717", "unclear", "The record does not state an age range. Second line."),
        ("NCT06970236", "no", "Eligibility allows ages 18 to 64 only."),
    ]
    prompts = [request["messages"][0]["content"] for request in research_llm.row_requests]
    assert [record_id(prompt) for prompt in prompts] == MELANOMA_NCTS
    assert "Criterion: Does the trial enrol adults over 65?" in prompts[0]
    assert '"value": "yes" | "no" | "unclear"' in prompts[0]
    assert research_llm.row_requests[0]["model"] == "claude-test"
    assert "stream" not in research_llm.row_requests[0]
    # Cached per (column, row): asking again evaluates nothing and calls no model.
    assert ai_column_run_start(column=column, item_ids=MELANOMA_NCTS) is None
    assert len(research_llm.row_requests) == 3


@pytest.mark.django_db
def test_one_failing_row_does_not_fail_the_column(research_llm, study_records, user) -> None:
    study_records({"NCT06970236": MELANOMA, "NCT04114136": MELANOMA, "NCT04318717": MELANOMA, "NCT00000001": None})

    def judge(prompt: str):
        item = record_id(prompt)
        if item == "NCT04114136":
            return HttpError(500, "api_error", "Internal server error")
        if item == "NCT04318717":
            return "I think the answer is probably yes."
        return ANSWERS[item]

    research_llm.judge = judge
    column = AIColumnFactory(user=user)
    run = ai_column_run_start(column=column, item_ids=[*MELANOMA_NCTS, "NCT00000001"])

    finished = ai_column_run_execute(run_id=run.pk)

    assert (finished.status, finished.done, finished.failed) == (AIColumnRunStatus.PARTIAL, 4, 3)
    assert [(error["item_id"], error["code"]) for error in finished.errors] == [
        ("NCT04114136", "llm_server_error"),
        ("NCT04318717", "llm_malformed_output"),
        ("NCT00000001", "record_unavailable"),
    ]
    assert finished.errors[1]["message"].startswith("The anthropic model was asked for a JSON object but replied")
    assert list(AIColumnResult.objects.filter(column=column).values_list("item_id", flat=True)) == ["NCT06970236"]
    # Failed rows are not cached: the next run retries exactly them.
    research_llm.judge = judge_from(ANSWERS)
    retry = ai_column_run_start(column=column, item_ids=[*MELANOMA_NCTS, "NCT00000001"])
    assert retry.item_ids == ["NCT04114136", "NCT04318717", "NCT00000001"]


@pytest.mark.django_db
def test_rejected_credentials_stop_the_run_after_one_call(research_llm, melanoma_records, user) -> None:
    research_llm.judge = lambda prompt: HttpError(401, "authentication_error", "invalid x-api-key")
    column = AIColumnFactory(user=user)
    run = ai_column_run_start(column=column, item_ids=MELANOMA_NCTS)

    finished = ai_column_run_execute(run_id=run.pk)

    assert finished.status == AIColumnRunStatus.FAILED
    assert [error["code"] for error in finished.errors] == ["llm_auth"] * 3
    assert len(research_llm.row_requests) == 1


@pytest.mark.django_db
def test_text_columns_keep_a_short_answer_for_abstracts(research_llm, abstracts, user) -> None:
    research_llm.judge = lambda prompt: {
        "value": f"  sample of  {record_id(prompt)}\n",
        "justification": "Stated in the methods.",
    }
    column = AIColumnFactory(user=user, page="tablizer", kind="text", criteria="What was the sample size?")
    run = ai_column_run_start(column=column, item_ids=["22663011", "35123456"])

    ai_column_run_execute(run_id=run.pk)

    assert sorted(AIColumnResult.objects.filter(column=column).values_list("item_id", "value")) == [
        ("22663011", "sample of 22663011"),
        ("35123456", "sample of 35123456"),
    ]
    prompt = research_llm.row_requests[0]["messages"][0]["content"]
    assert "Judge one article of a research table" in prompt
    assert "<record>\nPMID 22663011: " in prompt


@pytest.mark.django_db
def test_without_a_language_model_a_column_cannot_be_added_or_run(user, settings) -> None:
    settings.LLM_PROVIDER = "extractive"

    with pytest.raises(ValidationError) as caught:
        check_ai_column(user=user, page="trialscout", name="RCT", criteria="Is it an RCT?", kind="boolean")

    assert caught.value.messages == [LLM_REQUIRED_MESSAGE]
    column = AIColumnFactory(user=user)
    run = AIColumnRun.objects.create(column=column, item_ids=["NCT04114136"], total=1)
    finished = ai_column_run_execute(run_id=run.pk)
    assert finished.status == AIColumnRunStatus.FAILED
    assert finished.errors == [{"item_id": "NCT04114136", "code": "llm_required", "message": LLM_REQUIRED_MESSAGE}]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "errors"),
    [
        ({"name": "", "criteria": "Is it an RCT?", "kind": "boolean"}, {"name": ["Give the column a short name"]}),
        ({"name": "x" * 61, "criteria": "Is it?", "kind": "boolean"}, {"name": ["The name is 61 characters long"]}),
        ({"name": "RCT", "criteria": "?", "kind": "boolean"}, {"criteria": ["Write the criterion as a question"]}),
        ({"name": "R\x00CT", "criteria": "Is it?", "kind": "boolean"}, {"name": ["The name contains a NUL character"]}),
        ({"name": "RCT", "criteria": "Is it\x00?", "kind": "boolean"}, {"criteria": ["The criterion contains a NUL"]}),
        ({"name": "RCT", "criteria": "Is it?", "kind": "number"}, {"kind": ["The column type must be one of"]}),
        (
            {"name": "taken", "criteria": "Is it?", "kind": "text"},
            {"name": ["You already have a column named 'taken'"]},
        ),
    ],
)
def test_column_fields_are_checked_with_messages_that_say_what_to_fix(research_llm, user, fields, errors) -> None:
    AIColumnFactory(user=user, name="Taken")

    with pytest.raises(ValidationError) as caught:
        check_ai_column(user=user, page="trialscout", **fields)

    assert {
        key: [message[: len(errors[key][0])] for message in value] for key, value in caught.value.message_dict.items()
    } == errors


@pytest.mark.django_db
def test_a_created_column_records_the_provider_that_fills_it(research_llm, user) -> None:
    fields = check_ai_column(
        user=user, page="tablizer", name="  RCT  design ", criteria=" Is it an RCT? ", kind="boolean"
    )
    column = ai_column_create(user=user, page="tablizer", **fields)

    assert (column.name, column.criteria, column.provider, column.model) == (
        "RCT design",
        "Is it an RCT?",
        "anthropic",
        "claude-test",
    )
    with pytest.raises(ValidationError, match="already have a column named 'RCT design'"):
        ai_column_create(user=user, page="tablizer", **fields)
    assert AIColumn.objects.filter(user=user).count() == 1


@pytest.mark.parametrize(
    ("kind", "data", "expected"),
    [
        ("boolean", {"value": "yes", "justification": "Randomised."}, ("yes", "Randomised.")),
        ("boolean", {"value": True, "justification": ""}, ("yes", "")),
        ("boolean", {"value": "No.", "justification": "Cohort study"}, ("no", "Cohort study")),
        ("boolean", {"value": "Not reported", "justification": "x"}, ("unclear", "x")),
        ("text", {"value": "n = 120", "justification": "Methods"}, ("n = 120", "Methods")),
        ("text", {"value": "a " * 400, "justification": "long"}, ("a " * 149 + "a…", "long")),
    ],
)
def test_row_answers_are_normalised(kind: str, data: dict, expected: tuple[str, str]) -> None:
    assert parse_row_answer(kind=kind, data=data) == expected


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        ("boolean", {"value": "probably", "justification": "x"}, "'probably' is not one of ['yes', 'no', 'unclear']"),
        ("boolean", {"justification": "x"}, "None is not one of"),
        ("text", {"value": "", "justification": "x"}, "should be non-empty"),
        ("text", ["yes"], "did not answer with a JSON object"),
    ],
)
def test_unusable_row_answers_are_refused(kind: str, data, message: str) -> None:
    with pytest.raises(RowAnswerInvalid, match=re.escape(message)):
        parse_row_answer(kind=kind, data=data)


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_progress_is_recorded_row_by_row_on_a_real_worker(
    research_llm, melanoma_records, user, celery_worker
) -> None:
    gate = threading.Event()
    first_row_answered = threading.Event()

    def judge(prompt: str):
        item = record_id(prompt)
        if item != MELANOMA_NCTS[0]:
            first_row_answered.set()
            assert gate.wait(10), "the test never opened the gate"
        return ANSWERS[item]

    research_llm.judge = judge
    column = AIColumnFactory(user=user)
    run = ai_column_run_start(column=column, item_ids=MELANOMA_NCTS)

    assert first_row_answered.wait(10)
    seen = AIColumnRun.objects.get(pk=run.pk)
    assert (seen.status, seen.done, seen.total) == (AIColumnRunStatus.RUNNING, 1, 3)
    assert round(seen.progress, 3) == 0.333
    status = run_status(run=seen, results=list(AIColumnResult.objects.filter(column=column)))
    assert status["results"] == {
        "NCT06970236": {"value": "no", "label": "No", "justification": "Eligibility allows ages 18 to 64 only."}
    }
    assert status["finished"] is False
    gate.set()
    deadline = time.monotonic() + 10
    while not AIColumnRun.objects.get(pk=run.pk).finished and time.monotonic() < deadline:
        time.sleep(0.05)
    done = AIColumnRun.objects.get(pk=run.pk)
    assert (done.status, done.done, done.failed) == (AIColumnRunStatus.SUCCEEDED, 3, 0)
    assert done.task_id != ""
    assert AIColumnResult.objects.filter(column=column, run=done).count() == 3


@pytest.mark.django_db
def test_a_finished_run_is_not_run_again(research_llm, user) -> None:
    column = AIColumnFactory(user=user)
    AIColumnResultFactory(column=column, item_id="NCT04114136")
    run = AIColumnRun.objects.create(
        column=column, item_ids=["NCT04114136"], total=1, done=1, status=AIColumnRunStatus.SUCCEEDED
    )

    assert ai_column_run_execute(run_id=run.pk).status == AIColumnRunStatus.SUCCEEDED
    assert research_llm.row_requests == []


@pytest.mark.django_db
def test_a_job_the_broker_cannot_take_fails_with_a_plain_message(
    research_llm, user, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    from kombu.exceptions import OperationalError

    def broker_down(*args: object, **kwargs: object) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    # Only the hand-off to Celery is replaced: the run itself is stored in the real database.
    monkeypatch.setattr("research.tasks.ai_column_run_task.delay", broker_down)
    column = AIColumnFactory(user=user)
    with django_capture_on_commit_callbacks(execute=True):
        run = ai_column_run_start(column=column, item_ids=["NCT04114136"])
    assert run is not None
    run.refresh_from_db()
    assert run.status == AIColumnRunStatus.FAILED
    assert run.errors == [
        {
            "item_id": "",
            "code": "not_queued",
            "message": "The job could not be queued because the task queue is not answering; try again in a minute.",
        }
    ]
