"""The retry/backoff helper every external HTTP client uses."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable

import httpx
import pytest

from config.http_retries import (
    RetriesExhausted,
    RetryAfterTooLong,
    RetryPolicy,
    TransientFailure,
    body_snippet,
    is_transient_status,
    retry_after_seconds,
    seconds_left,
    time_limit,
    transient_status_failure,
)


def policy(sleeps: list[float], **overrides: float) -> RetryPolicy:
    options: dict[str, float] = {
        "max_retries": 2,
        "backoff_initial_seconds": 0.5,
        "backoff_max_seconds": 10.0,
        "retry_after_max_seconds": 30.0,
        **overrides,
    }
    return RetryPolicy(
        max_retries=int(options["max_retries"]),
        backoff_initial_seconds=options["backoff_initial_seconds"],
        backoff_max_seconds=options["backoff_max_seconds"],
        retry_after_max_seconds=options["retry_after_max_seconds"],
        log_event="test.retry",
        sleep=sleeps.append,
    )


def failing(failures: list[Exception], result: str = "ok") -> tuple[Callable[[], str], list[int]]:
    """Return an attempt that raises the given exceptions in turn, then returns `result`, and its call log."""
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return result

    return attempt, calls


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("", None),
        ("   ", None),
        ("7", 7.0),
        (" 2.5 ", 2.5),
        ("-3", 0.0),
        ("soon", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # a date in the past means "now"
    ],
)
def test_retry_after_header_values(header: str | None, expected: float | None) -> None:
    assert retry_after_seconds(header) == expected


def test_retry_after_as_a_future_http_date_counts_seconds_from_now() -> None:
    header = email.utils.formatdate(time.time() + 120, usegmt=True)
    seconds = retry_after_seconds(header)
    assert seconds is not None and 110 <= seconds <= 120


@pytest.mark.parametrize(("status", "transient"), [(200, False), (400, False), (404, False), (429, True),
                                                   (500, True), (503, True), (529, True)])
def test_transient_statuses(status: int, transient: bool) -> None:
    assert is_transient_status(status) is transient


def test_transient_status_failure_carries_status_and_retry_after() -> None:
    response = httpx.Response(429, headers={"Retry-After": "4"}, text="slow down")
    failure = transient_status_failure(response, "rate limited")
    assert (str(failure), failure.status, failure.retry_after) == ("rate limited", 429, 4.0)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [("short", 10, "short"), ("  many \n  spaces\there ", 50, "many spaces here"), ("abcdef ghij", 7, "abcdef…")],
)
def test_body_snippet(text: str, limit: int, expected: str) -> None:
    assert body_snippet(text, limit) == expected


def test_transient_failures_are_retried_until_success() -> None:
    sleeps: list[float] = []
    attempt, calls = failing([TransientFailure("HTTP 503"), TransientFailure("timed out")])
    assert policy(sleeps).call(attempt) == "ok"
    assert len(calls) == 3
    assert len(sleeps) == 2


def test_backoff_doubles_from_the_initial_wait_with_bounded_jitter() -> None:
    sleeps: list[float] = []
    attempt, _ = failing([TransientFailure("x")] * 4)
    policy(sleeps, max_retries=4, backoff_initial_seconds=0.5, backoff_max_seconds=1.5).call(attempt)
    assert len(sleeps) == 4
    assert 0.5 <= sleeps[0] <= 1.0  # initial + up to `initial` of jitter
    assert 1.0 <= sleeps[1] <= 1.5
    assert 1.5 <= sleeps[2] <= 2.0  # capped at backoff_max, jitter still added
    assert 1.5 <= sleeps[3] <= 2.0


def test_retry_after_sets_the_wait() -> None:
    sleeps: list[float] = []
    attempt, _ = failing([TransientFailure("HTTP 429", status=429, retry_after=7.0)])
    policy(sleeps).call(attempt)
    assert sleeps == [7.0]


def test_retry_after_longer_than_allowed_gives_up_without_retrying() -> None:
    sleeps: list[float] = []
    attempt, calls = failing([TransientFailure("HTTP 429", status=429, retry_after=3600.0)])
    with pytest.raises(RetryAfterTooLong) as caught:
        policy(sleeps, retry_after_max_seconds=30.0).call(attempt)
    assert (caught.value.status, caught.value.retry_after, len(calls), sleeps) == (429, 3600.0, 1, [])


def test_exhausted_retries_report_the_attempts_and_the_last_failure() -> None:
    sleeps: list[float] = []
    attempt, calls = failing([TransientFailure("first"), TransientFailure("second"), TransientFailure("third")])
    with pytest.raises(RetriesExhausted) as caught:
        policy(sleeps, max_retries=2).call(attempt)
    assert (caught.value.attempts, str(caught.value.failure), len(calls)) == (3, "third", 3)


def test_other_errors_propagate_at_once() -> None:
    sleeps: list[float] = []
    attempt, calls = failing([ValueError("HTTP 400: bad request")])
    with pytest.raises(ValueError, match="HTTP 400: bad request"):
        policy(sleeps).call(attempt)
    assert (len(calls), sleeps) == (1, [])


def test_no_retries_means_one_attempt() -> None:
    sleeps: list[float] = []
    attempt, calls = failing([TransientFailure("HTTP 500")])
    with pytest.raises(RetriesExhausted) as caught:
        policy(sleeps, max_retries=0).call(attempt)
    assert (caught.value.attempts, len(calls), sleeps) == (1, 1, [])


def test_under_a_time_limit_no_retry_starts_whose_wait_would_end_past_it() -> None:
    attempts: list[float] = []

    def fail() -> None:
        attempts.append(time.monotonic())
        raise TransientFailure("HTTP 503")

    patient = RetryPolicy(max_retries=10, backoff_initial_seconds=0.2, backoff_max_seconds=10.0,
                          retry_after_max_seconds=30.0, log_event="test.retry")
    with time_limit(0.5), pytest.raises(RetriesExhausted) as caught:
        patient.call(fail)
    # Waits of 0.2-0.4 s, then 0.4-0.6 s: at most one fits in half a second; eleven attempts without the limit.
    assert 1 <= len(attempts) <= 2
    assert caught.value.attempts == len(attempts)
    assert attempts[-1] - attempts[0] < 0.5


def test_seconds_left_is_none_outside_a_time_limit_and_counts_down_inside() -> None:
    assert seconds_left() is None
    with time_limit(5.0):
        left = seconds_left()
        assert left is not None and 4.0 < left <= 5.0
        with time_limit(0.0):
            assert seconds_left() == 0.0
        assert seconds_left() is not None
    assert seconds_left() is None
