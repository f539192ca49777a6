"""The one ClinicalTrials.gov API v2 client: `GET studies` (search) and `GET studies/{nctId}`.

Transient failures (HTTP 429, 5xx, timeouts, connection errors) are retried with exponential
backoff and jitter via tenacity, honouring `Retry-After`; everything else fails at once with a
`CtgovError` subclass whose message a user can act on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import httpx
import structlog
from django.conf import settings
from django.core.exceptions import ValidationError

from config import http_retries
from evidence.identifiers import validate_nct
from trials.constants import PHASES, STATUSES

logger = structlog.get_logger(__name__)

# The API coerces larger pages down to 1,000; asking for more is a caller bug, not a wish.
MAX_PAGE_SIZE = 1000
# Upper bound on how much of an error body is quoted back to the user.
ERROR_BODY_MAX_CHARS = 500
USER_AGENT = "MedCite/0.1 (ClinicalTrials.gov API v2 client)"

# Pieces a search asks for: what a results table shows, not whole records (a full record with
# results can be half a megabyte). Names from `GET /studies/metadata`.
SEARCH_FIELDS: tuple[str, ...] = (
    "NCTId",
    "BriefTitle",
    "OverallStatus",
    "Phase",
    "StudyType",
    "LeadSponsorName",
    "EnrollmentCount",
    "Condition",
    "InterventionName",
    "InterventionType",
    "StartDate",
    "CompletionDate",
)


class CtgovError(Exception):
    """ClinicalTrials.gov could not answer the request; `str(exc)` says why for a user."""


class CtgovBadRequest(CtgovError):
    """The request was rejected as malformed (HTTP 400, or refused before sending)."""


class InvalidNctId(CtgovBadRequest):
    """The NCT id is not `NCT` + 8 digits; no request was made."""


class CtgovNotFound(CtgovError):
    """ClinicalTrials.gov has no study with the requested NCT id (HTTP 404)."""


class CtgovUnavailable(CtgovError):
    """ClinicalTrials.gov kept failing (429, 5xx, timeouts, unreachable) after every retry."""


class CtgovInvalidResponse(CtgovError):
    """ClinicalTrials.gov answered, but not with what the v2 API documents."""


def check_nct_id(value: str) -> str:
    """Return `value` as a canonical NCT id (trimmed, upper-case) or raise InvalidNctId."""
    candidate = value.strip().upper() if isinstance(value, str) else ""
    try:
        validate_nct(candidate)
    except ValidationError as exc:
        # Quote what the caller sent, not the normalised form, so they recognise it.
        message = exc.messages[0].replace(repr(candidate), repr(value), 1)
        raise InvalidNctId(message) from exc
    return candidate


@dataclass(frozen=True)
class StudyQuery:
    """One `GET studies` request. Text fields are Essie expressions; empty means "not filtered"."""

    condition: str = ""
    intervention: str = ""
    sponsor: str = ""  # lead sponsor only (`query.lead`), not collaborators
    term: str = ""  # free text over the whole record (`query.term`)
    statuses: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    sort: tuple[str, ...] = ()
    page_size: int = 20
    page_token: str | None = None
    count_total: bool = True
    fields: tuple[str, ...] = field(default=SEARCH_FIELDS)

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise ValueError(f"page_size must be between 1 and {MAX_PAGE_SIZE}, got {self.page_size}.")
        unknown = [status for status in self.statuses if status not in STATUSES]
        if unknown:
            raise ValueError(f"Unknown overall status {unknown}; use values from {sorted(STATUSES)}.")
        unknown = [phase for phase in self.phases if phase not in PHASES]
        if unknown:
            raise ValueError(f"Unknown phase {unknown}; use values from {list(PHASES)}.")
        if len(self.sort) > 2:
            raise ValueError(f"ClinicalTrials.gov sorts by at most 2 fields, got {list(self.sort)}.")

    def to_params(self) -> dict[str, str]:
        """Return the query string parameters of the v2 `GET studies` call."""
        params: dict[str, str] = {"format": "json", "pageSize": str(self.page_size)}
        for name, value in (
            ("query.cond", self.condition),
            ("query.intr", self.intervention),
            ("query.lead", self.sponsor),
            ("query.term", self.term),
        ):
            if value.strip():
                params[name] = value.strip()
        if self.statuses:
            params["filter.overallStatus"] = ",".join(self.statuses)
        if self.phases:
            # Phase is not a filter parameter of its own; it is an Essie expression on the Phase area.
            inner = " OR ".join(self.phases)
            params["filter.advanced"] = f"AREA[Phase]({inner})" if len(self.phases) > 1 else f"AREA[Phase]{inner}"
        if self.sort:
            params["sort"] = ",".join(self.sort)
        if self.fields:
            params["fields"] = ",".join(self.fields)
        if self.page_token:
            params["pageToken"] = self.page_token
        elif self.count_total:
            # The API only counts on the first page and ignores the flag on later ones.
            params["countTotal"] = "true"
        return params


def _trouble(status: int | None) -> str:
    return "is rate-limiting MedCite" if status == 429 else "is failing"


class CtgovClient:
    """A thin client over an `httpx.Client`; use `CtgovClient.from_settings()` in application code."""

    def __init__(
        self,
        *,
        base_url: str,
        timeout_seconds: float,
        max_retries: int,
        backoff_initial_seconds: float,
        backoff_max_seconds: float,
        retry_after_max_seconds: float,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self.retries = http_retries.RetryPolicy(
            max_retries=max_retries,
            backoff_initial_seconds=backoff_initial_seconds,
            backoff_max_seconds=backoff_max_seconds,
            retry_after_max_seconds=retry_after_max_seconds,
            log_event="ctgov.retry",
            sleep=sleep,
        )
        self._owns_http = http is None
        self._http = http or httpx.Client(
            timeout=timeout_seconds,
            follow_redirects=True,  # an NCT alias answers 301 to the study's current id
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )

    @classmethod
    def from_settings(cls, **overrides: Any) -> Self:
        """Build a client from the CTGOV_* settings; keyword arguments override single values."""
        options: dict[str, Any] = {
            "base_url": settings.CTGOV_BASE_URL,
            "timeout_seconds": settings.CTGOV_TIMEOUT_SECONDS,
            "max_retries": settings.CTGOV_MAX_RETRIES,
            "backoff_initial_seconds": settings.CTGOV_BACKOFF_INITIAL_SECONDS,
            "backoff_max_seconds": settings.CTGOV_BACKOFF_MAX_SECONDS,
            "retry_after_max_seconds": settings.CTGOV_RETRY_AFTER_MAX_SECONDS,
        }
        options.update(overrides)
        return cls(**options)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    # --- endpoints ------------------------------------------------------------------------------

    def search_studies(self, query: StudyQuery) -> dict[str, Any]:
        """Return one page of `GET studies`: `{"studies": [...], "nextPageToken"?, "totalCount"?}`."""
        body = self._get_json("studies", query.to_params(), what="the study search", not_found=None)
        if not isinstance(body.get("studies"), list):
            raise CtgovInvalidResponse("ClinicalTrials.gov answered the search without a `studies` list.")
        return body

    def get_study(self, nct_id: str) -> dict[str, Any]:
        """Return the full v2 record of one study; the NCT id is checked before any request."""
        nct_id = check_nct_id(nct_id)
        body = self._get_json(
            f"studies/{nct_id}",
            {"format": "json"},
            what=nct_id,
            not_found=f"ClinicalTrials.gov has no study {nct_id}; check the NCT number.",
        )
        if not isinstance(body.get("protocolSection"), dict):
            raise CtgovInvalidResponse(f"ClinicalTrials.gov answered {nct_id} without a protocolSection.")
        return body

    # --- transport ------------------------------------------------------------------------------

    def _get_json(self, path: str, params: dict[str, str], *, what: str, not_found: str | None) -> dict[str, Any]:
        try:
            response = self.retries.call(lambda: self._send(path, params, what=what, not_found=not_found), path=path)
        except http_retries.RetryAfterTooLong as exc:
            raise CtgovUnavailable(
                f"ClinicalTrials.gov {_trouble(exc.status)} (HTTP {exc.status}) "
                f"and asks to wait {exc.retry_after:.0f} s; try again later."
            ) from exc
        except http_retries.RetriesExhausted as exc:
            tries = "1 attempt" if exc.attempts == 1 else f"{exc.attempts} attempts"
            raise CtgovUnavailable(f"{exc.failure} ({tries}); try again in a few minutes.") from exc
        try:
            body = response.json()
        except ValueError as exc:
            raise CtgovInvalidResponse(
                f"ClinicalTrials.gov answered {what} with something that is not JSON "
                f"({response.headers.get('Content-Type', 'no content type')})."
            ) from exc
        if not isinstance(body, dict):
            raise CtgovInvalidResponse(f"ClinicalTrials.gov answered {what} with JSON that is not an object.")
        return body

    def _send(self, path: str, params: dict[str, str], *, what: str, not_found: str | None) -> httpx.Response:
        url = self.base_url + path
        try:
            response = self._http.get(url, params=params, timeout=self.timeout_seconds)
        except httpx.TimeoutException as exc:
            message = f"ClinicalTrials.gov did not answer within {self.timeout_seconds:g} s"
            raise http_retries.TransientFailure(message) from exc
        except httpx.TransportError as exc:
            message = f"ClinicalTrials.gov could not be reached ({type(exc).__name__})"
            raise http_retries.TransientFailure(message) from exc
        status = response.status_code
        logger.debug("ctgov.response", path=path, status=status)
        if http_retries.is_transient_status(status):
            message = f"ClinicalTrials.gov {_trouble(status)} (HTTP {status})"
            raise http_retries.transient_status_failure(response, message)
        if status == 400:
            detail = http_retries.body_snippet(response.text, ERROR_BODY_MAX_CHARS) or "no reason given"
            raise CtgovBadRequest(f"ClinicalTrials.gov rejected the request for {what}: {detail}")
        if status == 404 and not_found is not None:
            raise CtgovNotFound(not_found)
        if status != 200:
            raise CtgovInvalidResponse(f"ClinicalTrials.gov answered {what} with unexpected HTTP {status}.")
        return response
