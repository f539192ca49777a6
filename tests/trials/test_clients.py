"""The ClinicalTrials.gov client against a fake server on 127.0.0.1 replaying real v2 recordings."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from trials.clients import (
    SEARCH_FIELDS,
    CtgovBadRequest,
    CtgovClient,
    CtgovInvalidResponse,
    CtgovNotFound,
    CtgovUnavailable,
    InvalidNctId,
    StudyQuery,
    check_nct_id,
)

FIELDS = ",".join(SEARCH_FIELDS)
PHELAN_TOKEN = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw"
JSON = "application/json"


def make_client(server: HTTPServer, *, sleeps: list[float] | None = None, **options: Any) -> CtgovClient:
    settings: dict[str, Any] = {
        "base_url": server.url_for("/api/v2/"),
        "timeout_seconds": 2.0,
        "max_retries": 2,
        "backoff_initial_seconds": 0.0,
        "backoff_max_seconds": 0.0,
        "retry_after_max_seconds": 30.0,
    }
    settings.update(options)
    if sleeps is not None:
        settings["sleep"] = sleeps.append
    return CtgovClient(**settings)


def received(server: HTTPServer) -> list[dict[str, str]]:
    """Return the query parameters of every request the fake server received, in order."""
    return [request.args.to_dict(flat=True) for request, _ in server.log]


@pytest.mark.parametrize(
    ("query", "recording_name", "expected"),
    [
        (
            StudyQuery(condition="Phelan-McDermid Syndrome", page_size=5),
            "biomcp/search_phelan_limit5_20260811.json",
            {"query.cond": "Phelan-McDermid Syndrome", "pageSize": "5", "countTotal": "true"},
        ),
        (
            StudyQuery(intervention='"Keytruda"', page_size=3),
            "biomcp/search_keytruda_limit3_20260811.json",
            {"query.intr": '"Keytruda"', "pageSize": "3", "countTotal": "true"},
        ),
        (
            StudyQuery(condition="melanoma", statuses=("RECRUITING",), page_size=3),
            "biomcp/search_melanoma_recruiting_limit3_20260811.json",
            {
                "query.cond": "melanoma",
                "filter.overallStatus": "RECRUITING",
                "pageSize": "3",
                "countTotal": "true",
            },
        ),
        (
            StudyQuery(condition="melanoma", statuses=("RECRUITING", "NOT_YET_RECRUITING", "ACTIVE_NOT_RECRUITING")),
            "biomcp/search_melanoma_recruiting_limit3_20260811.json",
            {
                "query.cond": "melanoma",
                "filter.overallStatus": "RECRUITING,NOT_YET_RECRUITING,ACTIVE_NOT_RECRUITING",
                "pageSize": "20",
                "countTotal": "true",
            },
        ),
        (
            StudyQuery(sponsor="Merck Sharp & Dohme LLC"),
            "biomcp/search_keytruda_limit3_20260811.json",
            {"query.lead": "Merck Sharp & Dohme LLC", "pageSize": "20", "countTotal": "true"},
        ),
        (
            StudyQuery(phases=("PHASE3",)),
            "biomcp/search_keytruda_limit3_20260811.json",
            {"filter.advanced": "AREA[Phase]PHASE3", "pageSize": "20", "countTotal": "true"},
        ),
        (
            StudyQuery(phases=("PHASE2", "PHASE3")),
            "biomcp/search_keytruda_limit3_20260811.json",
            {"filter.advanced": "AREA[Phase](PHASE2 OR PHASE3)", "pageSize": "20", "countTotal": "true"},
        ),
        (
            StudyQuery(condition="non-small cell lung cancer", term='AREA[EligibilityCriteria]("EGFR L858R")'),
            "biomcp/search_nsclc_egfr_l858r_20260811.json",
            {
                "query.cond": "non-small cell lung cancer",
                "query.term": 'AREA[EligibilityCriteria]("EGFR L858R")',
                "pageSize": "20",
                "countTotal": "true",
            },
        ),
        (
            StudyQuery(condition="melanoma", sort=("LastUpdatePostDate:desc",)),
            "biomcp/search_melanoma_recruiting_limit3_20260811.json",
            {
                "query.cond": "melanoma",
                "sort": "LastUpdatePostDate:desc",
                "pageSize": "20",
                "countTotal": "true",
            },
        ),
        (
            StudyQuery(condition="Phelan-McDermid Syndrome", page_size=5, page_token=PHELAN_TOKEN),
            "biomcp/search_phelan_next_20260811.json",
            # countTotal is for first pages only; a later page carries the token instead.
            {"query.cond": "Phelan-McDermid Syndrome", "pageSize": "5", "pageToken": PHELAN_TOKEN},
        ),
        (
            StudyQuery(count_total=False, page_size=1),
            "biomcp/search_age_count_20260811.json",
            {"pageSize": "1"},
        ),
    ],
)
def test_search_sends_each_filter_as_its_v2_parameter(
    ctgov: HTTPServer,
    recording: Callable[[str], bytes],
    query: StudyQuery,
    recording_name: str,
    expected: dict[str, str],
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(recording(recording_name), content_type=JSON)

    with make_client(ctgov) as client:
        body = client.search_studies(query)

    assert received(ctgov) == [{"format": "json", "fields": FIELDS, **expected}]
    assert body["studies"], "the recording was replayed"


def test_paging_sends_the_next_page_token_with_the_same_criteria(
    ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    pages = {
        None: recording("biomcp/search_phelan_limit5_20260811.json"),
        PHELAN_TOKEN: recording("biomcp/search_phelan_next_20260811.json"),
    }
    ctgov.expect_request("/api/v2/studies").respond_with_handler(
        lambda request: Response(pages[request.args.get("pageToken")], content_type=JSON)
    )
    first_query = StudyQuery(condition="Phelan-McDermid Syndrome", page_size=5)

    with make_client(ctgov) as client:
        first = client.search_studies(first_query)
        second = client.search_studies(
            StudyQuery(condition="Phelan-McDermid Syndrome", page_size=5, page_token=first["nextPageToken"])
        )

    assert (first["totalCount"], len(first["studies"]), len(second["studies"])) == (21, 5, 5)
    assert "totalCount" not in second
    base = {"format": "json", "fields": FIELDS, "query.cond": "Phelan-McDermid Syndrome", "pageSize": "5"}
    assert received(ctgov) == [{**base, "countTotal": "true"}, {**base, "pageToken": PHELAN_TOKEN}]


def test_last_page_has_no_next_page_token(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_phelan_limit50_20260811.json"), content_type=JSON
    )

    with make_client(ctgov) as client:
        body = client.search_studies(StudyQuery(condition="Phelan-McDermid Syndrome", page_size=50))

    assert "nextPageToken" not in body
    assert (body["totalCount"], len(body["studies"])) == (3, 3)


@given(page_size=st.integers(min_value=1, max_value=1000))
def test_every_page_size_the_api_accepts_is_sent_unchanged(page_size: int) -> None:
    assert StudyQuery(condition="asthma", page_size=page_size).to_params()["pageSize"] == str(page_size)


@given(page_size=st.one_of(st.integers(max_value=0), st.integers(min_value=1001)))
def test_page_size_outside_1_to_1000_is_refused(page_size: int) -> None:
    with pytest.raises(ValueError, match=f"page_size must be between 1 and 1000, got {page_size}."):
        StudyQuery(condition="asthma", page_size=page_size)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"statuses": ("OPEN",)}, "Unknown overall status ['OPEN']"),
        ({"phases": ("PHASE5",)}, "Unknown phase ['PHASE5']"),
        ({"sort": ("StartDate", "EnrollmentCount", "LastUpdatePostDate")}, "sorts by at most 2 fields"),
    ],
)
def test_query_with_values_the_api_does_not_know_is_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        StudyQuery(**options)


def test_get_study_returns_the_record(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    ctgov.expect_request("/api/v2/studies/NCT02576665").respond_with_data(
        recording("biomcp/get_nct02576665_20260811.json"), content_type=JSON
    )

    with make_client(ctgov) as client:
        body = client.get_study(" nct02576665 ")

    assert body["protocolSection"]["identificationModule"]["nctId"] == "NCT02576665"
    assert received(ctgov) == [{"format": "json"}]


def test_get_study_follows_the_redirect_from_an_nct_alias(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    ctgov.expect_request("/api/v2/studies/NCT00000001").respond_with_response(
        Response(status=301, headers={"Location": ctgov.url_for("/api/v2/studies/NCT02576665?format=json")})
    )
    ctgov.expect_request("/api/v2/studies/NCT02576665").respond_with_data(
        recording("biomcp/get_nct02576665_20260811.json"), content_type=JSON
    )

    with make_client(ctgov) as client:
        body = client.get_study("NCT00000001")

    assert body["protocolSection"]["identificationModule"]["nctId"] == "NCT02576665"
    assert [request.path for request, _ in ctgov.log] == [
        "/api/v2/studies/NCT00000001",
        "/api/v2/studies/NCT02576665",
    ]


@pytest.mark.parametrize(
    ("nct_id", "message"),
    [
        ("NCT123", "'NCT123' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951."),
        (
            "NCT123456789",
            "'NCT123456789' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951.",
        ),
        (
            "02576665",
            "'02576665' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951.",
        ),
        ("", "'' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951."),
        (
            "NCT0257666a",
            "'NCT0257666a' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951.",
        ),
        (
            "NCT02576665/../metadata",
            "'NCT02576665/../metadata' is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951.",
        ),
    ],
)
def test_invalid_nct_id_is_refused_before_any_request(ctgov: HTTPServer, nct_id: str, message: str) -> None:
    with make_client(ctgov) as client, pytest.raises(InvalidNctId) as caught:
        client.get_study(nct_id)

    assert str(caught.value) == message
    assert isinstance(caught.value, CtgovBadRequest)
    assert ctgov.log == []


def test_check_nct_id_returns_the_canonical_form() -> None:
    assert check_nct_id(" nct03057951\n") == "NCT03057951"


def test_429_then_200_is_retried(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    ctgov.expect_ordered_request("/api/v2/studies/NCT06604689").respond_with_data("Too Many Requests", status=429)
    ctgov.expect_ordered_request("/api/v2/studies/NCT06604689").respond_with_data(
        recording("biomcp/get_nct06604689_20260811.json"), content_type=JSON
    )

    with make_client(ctgov) as client:
        body = client.get_study("NCT06604689")

    assert body["protocolSection"]["identificationModule"]["nctId"] == "NCT06604689"
    assert len(ctgov.log) == 2


def test_503_twice_then_200_is_retried(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    for _ in range(2):
        ctgov.expect_ordered_request("/api/v2/studies").respond_with_data("Service Unavailable", status=503)
    ctgov.expect_ordered_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_melanoma_recruiting_limit3_20260811.json"), content_type=JSON
    )

    with make_client(ctgov, max_retries=2) as client:
        body = client.search_studies(StudyQuery(condition="melanoma", statuses=("RECRUITING",), page_size=3))

    assert body["totalCount"] == 480
    assert len(ctgov.log) == 3
    assert len({str(args) for args in received(ctgov)}) == 1, "every retry repeats the same request"


def test_server_errors_after_every_retry_raise_unavailable(ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data("Bad Gateway", status=502)

    with make_client(ctgov, max_retries=2) as client, pytest.raises(CtgovUnavailable) as caught:
        client.get_study("NCT06604689")

    assert str(caught.value) == "ClinicalTrials.gov is failing (HTTP 502) (3 attempts); try again in a few minutes."
    assert len(ctgov.log) == 3


def test_backoff_grows_exponentially_between_retries(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    for _ in range(2):
        ctgov.expect_ordered_request("/api/v2/studies/NCT06604689").respond_with_data("", status=500)
    ctgov.expect_ordered_request("/api/v2/studies/NCT06604689").respond_with_data(
        recording("biomcp/get_nct06604689_20260811.json"), content_type=JSON
    )
    sleeps: list[float] = []

    with make_client(ctgov, sleeps=sleeps, backoff_initial_seconds=0.5, backoff_max_seconds=10.0) as client:
        client.get_study("NCT06604689")

    # initial * 2^(attempt-1) plus up to `initial` of jitter.
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] <= 1.0
    assert 1.0 <= sleeps[1] <= 1.5


def test_retry_after_from_the_server_sets_the_wait(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    ctgov.expect_ordered_request("/api/v2/studies/NCT06604689").respond_with_data(
        "", status=429, headers={"Retry-After": "7"}
    )
    ctgov.expect_ordered_request("/api/v2/studies/NCT06604689").respond_with_data(
        recording("biomcp/get_nct06604689_20260811.json"), content_type=JSON
    )
    sleeps: list[float] = []

    with make_client(ctgov, sleeps=sleeps, backoff_initial_seconds=0.5) as client:
        client.get_study("NCT06604689")

    assert sleeps == [7.0]


def test_retry_after_longer_than_allowed_fails_at_once(ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data(
        "", status=429, headers={"Retry-After": "3600"}
    )

    with (
        make_client(ctgov, retry_after_max_seconds=30.0) as client,
        pytest.raises(CtgovUnavailable) as caught,
    ):
        client.get_study("NCT06604689")

    assert str(caught.value) == (
        "ClinicalTrials.gov is rate-limiting MedCite (HTTP 429) and asks to wait 3600 s; try again later."
    )
    assert len(ctgov.log) == 1


class SlowHandler:
    """Answer after `delay` seconds for the first `slow_calls` requests, at once afterwards.

    `finish()` releases any request still held and waits for it, so a request left hanging by a
    timeout cannot land in the next test's request log.
    """

    def __init__(self, body: bytes, *, delay: float, slow_calls: int) -> None:
        self.body, self.delay, self.slow_calls = body, delay, slow_calls
        self.calls = 0
        self.answered = 0
        self._lock = threading.Lock()
        self._release = threading.Event()

    def __call__(self, request: Request) -> Response:
        with self._lock:
            self.calls += 1
            slow = self.calls <= self.slow_calls
        if slow:
            self._release.wait(self.delay)
        with self._lock:
            self.answered += 1
        return Response(self.body, content_type=JSON)

    def finish(self) -> None:
        self._release.set()
        deadline = time.monotonic() + 5
        while self.answered < self.calls and time.monotonic() < deadline:
            time.sleep(0.01)


def test_timeout_is_retried(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    slow = SlowHandler(recording("biomcp/get_nct06604689_20260811.json"), delay=2.0, slow_calls=1)
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_handler(slow)

    with make_client(ctgov, timeout_seconds=0.2, max_retries=1) as client:
        body = client.get_study("NCT06604689")
    slow.finish()

    assert body["protocolSection"]["identificationModule"]["nctId"] == "NCT06604689"
    assert slow.calls == 2
    assert len(ctgov.log) == 2


def test_timeouts_on_every_attempt_raise_unavailable(ctgov: HTTPServer) -> None:
    slow = SlowHandler(b"{}", delay=2.0, slow_calls=99)
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_handler(slow)

    started = time.monotonic()
    with (
        make_client(ctgov, timeout_seconds=0.15, max_retries=1) as client,
        pytest.raises(CtgovUnavailable) as caught,
    ):
        client.get_study("NCT06604689")
    elapsed = time.monotonic() - started
    slow.finish()

    assert str(caught.value) == (
        "ClinicalTrials.gov did not answer within 0.15 s (2 attempts); try again in a few minutes."
    )
    assert slow.calls == 2
    assert elapsed < 1.0


def test_unreachable_server_raises_unavailable() -> None:
    client = CtgovClient(
        base_url="http://127.0.0.1:9/api/v2/",
        timeout_seconds=1.0,
        max_retries=1,
        backoff_initial_seconds=0.0,
        backoff_max_seconds=0.0,
        retry_after_max_seconds=1.0,
    )
    with client, pytest.raises(CtgovUnavailable) as caught:
        client.get_study("NCT06604689")

    assert str(caught.value) == (
        "ClinicalTrials.gov could not be reached (ConnectError) (2 attempts); try again in a few minutes."
    )


def test_bad_request_body_is_surfaced_and_not_retried(ctgov: HTTPServer) -> None:
    # No real ClinicalTrials.gov 400 body was captured; the OpenAPI document says they are text/plain.
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        "Unknown sort field: Foo\n", status=400, content_type="text/plain"
    )

    with make_client(ctgov) as client, pytest.raises(CtgovBadRequest) as caught:
        client.search_studies(StudyQuery(condition="asthma", sort=("Foo",)))

    assert str(caught.value) == "ClinicalTrials.gov rejected the request for the study search: Unknown sort field: Foo"
    assert len(ctgov.log) == 1


def test_unknown_study_raises_not_found(ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT99999999").respond_with_data(
        "Study not found", status=404, content_type="text/plain"
    )

    with make_client(ctgov) as client, pytest.raises(CtgovNotFound) as caught:
        client.get_study("NCT99999999")

    assert str(caught.value) == "ClinicalTrials.gov has no study NCT99999999; check the NCT number."
    assert len(ctgov.log) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (
            "<html>maintenance</html>",
            "text/html",
            "ClinicalTrials.gov answered NCT06604689 with something that is not JSON (text/html).",
        ),
        ("[1, 2]", JSON, "ClinicalTrials.gov answered NCT06604689 with JSON that is not an object."),
        ('{"hasResults": false}', JSON, "ClinicalTrials.gov answered NCT06604689 without a protocolSection."),
    ],
)
def test_unusable_answer_raises_invalid_response(ctgov: HTTPServer, body: str, content_type: str, message: str) -> None:
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data(body, content_type=content_type)

    with make_client(ctgov) as client, pytest.raises(CtgovInvalidResponse) as caught:
        client.get_study("NCT06604689")

    assert str(caught.value) == message


def test_client_from_settings_uses_ctgov_settings(settings) -> None:
    settings.CTGOV_BASE_URL = "http://127.0.0.1:9/ctgov/api/v2/"
    settings.CTGOV_TIMEOUT_SECONDS = 3.5
    settings.CTGOV_MAX_RETRIES = 6

    with CtgovClient.from_settings() as client:
        assert (client.base_url, client.timeout_seconds, client.max_retries) == (
            "http://127.0.0.1:9/ctgov/api/v2/",
            3.5,
            6,
        )
