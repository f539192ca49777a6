"""Retries with backoff for MedCite's external HTTP clients (NCBI E-utilities, ClinicalTrials.gov).

A client's single-attempt function raises `TransientFailure` for what is worth another try
(429, 5xx, timeouts, connection errors) and its own error types for everything else.
`RetryPolicy.call` repeats it through tenacity, waiting the server's `Retry-After` when one was
sent and otherwise `initial · 2^(attempt-1)` (capped) plus up to `initial` of jitter, so workers
do not retry in step. A `Retry-After` longer than the policy allows ends the retries at once.
The client turns the two ways of giving up (`RetryAfterTooLong`, `RetriesExhausted`) into
messages in its own words.

A caller that cannot wait long (a clinician's answer searching PubMed live) sets a time limit around its
requests (`time_limit`): within it, no retry starts whose wait would end past the limit, and a client gives
each request at most the time left (`seconds_left`). Without one, the policy's own attempts and waits apply.
"""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

import httpx
import structlog
import tenacity

logger = structlog.get_logger(__name__)

T = TypeVar("T")


class TransientFailure(Exception):
    """A failure worth another attempt; carries the HTTP status and `Retry-After` seconds when known."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class RetryAfterTooLong(Exception):
    """The server asked for a longer wait than `RetryPolicy.retry_after_max_seconds`; no retry was made."""

    def __init__(self, failure: TransientFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.status = failure.status
        self.retry_after: float = failure.retry_after or 0.0


class RetriesExhausted(Exception):
    """Every attempt failed transiently; `failure` is the last one."""

    def __init__(self, failure: TransientFailure, *, attempts: int) -> None:
        super().__init__(str(failure))
        self.failure = failure
        self.attempts = attempts


_deadline: ContextVar[float | None] = ContextVar("http_retry_deadline", default=None)


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Within the block, retries stop before a wait that would end more than `seconds` from now."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def seconds_left() -> float | None:
    """Return the seconds left under the caller's `time_limit` (at least 0), or None when there is none."""
    deadline = _deadline.get()
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


class _StopAtDeadline(tenacity.stop.stop_base):
    """Stop before a wait that would end past the caller's `time_limit`."""

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        deadline = _deadline.get()
        return deadline is not None and time.monotonic() + retry_state.upcoming_sleep >= deadline


def is_transient_status(status: int) -> bool:
    """Return True for the HTTP statuses worth retrying: 429 and every 5xx."""
    return status == 429 or status >= 500


def retry_after_seconds(value: str | None) -> float | None:
    """Parse a Retry-After header (delta-seconds or an HTTP date) into seconds from now; None if absent or bad."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def transient_status_failure(response: httpx.Response, message: str) -> TransientFailure:
    """Return the TransientFailure for a 429/5xx `response`, with its status and Retry-After."""
    return TransientFailure(
        message, status=response.status_code, retry_after=retry_after_seconds(response.headers.get("Retry-After"))
    )


def body_snippet(text: str, limit: int) -> str:
    """Return `text` with whitespace collapsed, cut to `limit` characters plus an ellipsis when longer."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry one service; `log_event` names the warning logged before each wait."""

    max_retries: int
    backoff_initial_seconds: float
    backoff_max_seconds: float
    retry_after_max_seconds: float
    log_event: str
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    @property
    def attempts(self) -> int:
        return self.max_retries + 1

    def call(self, attempt: Callable[[], T], **log_fields: object) -> T:
        """Return `attempt()`, retrying TransientFailure; raise RetryAfterTooLong or RetriesExhausted when giving up.

        Other exceptions from `attempt` propagate at once, unretried.
        """
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(self._worth_retrying),
            stop=tenacity.stop_any(tenacity.stop_after_attempt(self.attempts), _StopAtDeadline()),
            wait=self._wait,
            sleep=self.sleep,
            before_sleep=lambda state: self._log_retry(state, log_fields),
            reraise=True,
        )
        try:
            return retrying(attempt)
        except TransientFailure as failure:
            if self._waits_too_long(failure):
                raise RetryAfterTooLong(failure) from failure
            raise RetriesExhausted(failure, attempts=retrying.statistics.get("attempt_number", 1)) from failure

    def _waits_too_long(self, failure: TransientFailure) -> bool:
        return failure.retry_after is not None and failure.retry_after > self.retry_after_max_seconds

    def _worth_retrying(self, exc: BaseException) -> bool:
        return isinstance(exc, TransientFailure) and not self._waits_too_long(exc)

    def _wait(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        failure = outcome.exception() if outcome is not None else None
        if isinstance(failure, TransientFailure) and failure.retry_after is not None:
            return failure.retry_after
        backoff = tenacity.wait_exponential(
            multiplier=self.backoff_initial_seconds, max=self.backoff_max_seconds
        ) + tenacity.wait_random(0, self.backoff_initial_seconds)
        return float(backoff(retry_state))

    def _log_retry(self, retry_state: tenacity.RetryCallState, log_fields: dict[str, object]) -> None:
        outcome = retry_state.outcome
        logger.warning(
            self.log_event,
            **log_fields,
            attempt=retry_state.attempt_number,
            error=str(outcome.exception()) if outcome is not None else "",
            sleep_seconds=round(retry_state.upcoming_sleep, 3),
        )
