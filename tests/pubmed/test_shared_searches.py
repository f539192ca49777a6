"""Live searches share the NCBI budget: cached across users, coalesced when identical, bounded by a deadline."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from django.db import connections
from werkzeug import Request, Response

from pubmed.clients import EutilsBusy, EutilsClient, eutils_client
from pubmed.models import Abstract
from pubmed.ratelimit import PostgresRateLimiter, RedisRateLimiter, _redis_client, ncbi_budget_wait
from pubmed.services.ingest import fetch_and_cache, normalise_term
from tests.pubmed.conftest import FakeEutils

QUERY = '"colorectal cancer"[tiab] AND "lynch syndrome"[tiab]'


def _slowly(handler, seconds: float):
    """Answer like `handler`, after `seconds` (NCBI's latency, so concurrent callers overlap)."""

    def handle(request: Request) -> Response:
        time.sleep(seconds)
        return handler(request)

    return handle


def _serve(fake_eutils: FakeEutils, pmids: list[str], *, latency: float = 0.0, query: str = QUERY) -> None:
    fake_eutils.esearch_ids[query] = pmids
    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(
        _slowly(fake_eutils.esearch_handler, latency)
    )
    fake_eutils.server.expect_request("/efetch.fcgi").respond_with_handler(
        _slowly(fake_eutils.efetch_handler, latency)
    )


@pytest.mark.parametrize(
    ("term", "normalised"),
    [
        ('"Colorectal  Cancer"[TIAB] AND Lynch', '"colorectal cancer"[tiab] AND lynch'),
        ("BRAF V600E OR (melanoma NOT uveal)", "braf v600e OR (melanoma NOT uveal)"),
        ("notch1 and ORAL", "notch1 and oral"),  # only upper-case AND/OR/NOT are operators in PubMed
        ("  metformin\n", "metformin"),
    ],
)
def test_normalised_term_keeps_operators_and_drops_case_and_spacing(term: str, normalised: str) -> None:
    assert normalise_term(term) == normalised


def test_a_search_another_user_ran_is_served_from_the_cache_and_the_store(fake_eutils: FakeEutils) -> None:
    pmids = sorted(fake_eutils.articles)[:3]
    _serve(fake_eutils, pmids)

    first = fetch_and_cache(queries=[QUERY], max_per_query=10)
    # A second clinician's question yields the same query in other spacing and letter case.
    second = fetch_and_cache(queries=[f"  {QUERY.upper().replace(' AND ', '  AND ')}"], max_per_query=10)

    assert (first.found, first.new) == (3, 3)
    assert (second.found, second.new, second.pmids) == (3, 0, first.pmids)
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1
    assert len(fake_eutils.requests("/efetch.fcgi")) == 1


def test_an_abstract_already_stored_is_never_fetched_again(fake_eutils: FakeEutils) -> None:
    known, *others = sorted(fake_eutils.articles)[:3]
    fake_eutils.esearch_ids["first"] = [known]
    fake_eutils.esearch_ids[QUERY] = [known, *others]
    fake_eutils.serve()
    fetch_and_cache(queries=["first"], max_per_query=10)

    outcome = fetch_and_cache(queries=[QUERY], max_per_query=10)

    assert (outcome.found, outcome.new) == (3, 2)
    fetched = [request.params["id"].split(",") for request in fake_eutils.requests("/efetch.fcgi")]
    assert fetched == [[known], others]


@pytest.mark.parametrize("store", ["postgresql", "redis"])
@pytest.mark.django_db(transaction=True)
def test_identical_concurrent_searches_send_one_esearch_and_one_efetch(
    store: str, fake_eutils: FakeEutils, settings: object, redis_url: str
) -> None:
    settings.REDIS_URL = redis_url if store == "redis" else ""  # type: ignore[attr-defined]
    pmids = sorted(fake_eutils.articles)[:4]
    # A query of this run alone: the lock is shared by every process using the same Redis.
    query = f'{QUERY} AND "{uuid.uuid4().hex}"[tiab]'
    _serve(fake_eutils, pmids, latency=0.4, query=query)
    outcomes, errors = [], []
    start = threading.Barrier(4)

    def ask() -> None:
        try:
            start.wait(timeout=30)
            outcomes.append(fetch_and_cache(queries=[query], max_per_query=10))
        except Exception as exc:  # collected for the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    users = [threading.Thread(target=ask) for _ in range(4)]
    for user in users:
        user.start()
    for user in users:
        user.join(timeout=120)

    assert errors == []
    assert [outcome.pmids for outcome in outcomes] == [pmids] * 4
    assert sorted(outcome.new for outcome in outcomes) == [0, 0, 0, 4]
    assert sorted(outcome.coalesced for outcome in outcomes) == [False, True, True, True]
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1
    assert len(fake_eutils.requests("/efetch.fcgi")) == 1
    assert Abstract.objects.filter(pmid__in=pmids).count() == 4


def _probe_esearch(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    fake_eutils.respond(
        "/esearch.fcgi", (eutils_dir / "biomcp/esearch_pubmed_json_mlh1_g67e_1hit.json").read_text()
    )


@pytest.mark.parametrize("store", ["postgresql", "redis"])
def test_a_request_that_would_wait_longer_than_allowed_is_not_sent(
    store: str, fake_eutils: FakeEutils, eutils_dir: Path, redis_url: str
) -> None:
    _probe_esearch(fake_eutils, eutils_dir)
    budget = f"test-{uuid.uuid4().hex}"
    postgres = PostgresRateLimiter(budget=budget, limit=3, window_seconds=2.0)
    limiter = (
        RedisRateLimiter(client=_redis_client(redis_url), key=budget, limit=3, window_seconds=2.0, fallback=postgres)
        if store == "redis"
        else postgres
    )
    client = EutilsClient(base_url=fake_eutils.server.url_for("/"), tool="medcite-tests", max_retries=0,
                          limiter=limiter)
    for _ in range(3):  # other answers took the whole budget for the next two seconds
        client.esearch("probe")

    with ncbi_budget_wait(0.3), pytest.raises(EutilsBusy, match=r"^No request was sent to NCBI E-utilities "
                                                r"esearch\.fcgi: the NCBI request budget is in use"):
        client.esearch("probe")

    assert len(fake_eutils.requests("/esearch.fcgi")) == 3


def test_a_live_search_that_finds_the_budget_busy_reports_it_and_sends_nothing(
    fake_eutils: FakeEutils, settings: object
) -> None:
    settings.NCBI_API_KEY = ""  # type: ignore[attr-defined]  # keyless: 3 requests per second
    _serve(fake_eutils, sorted(fake_eutils.articles)[:2])
    client = eutils_client()
    for _ in range(3):
        client.limiter.acquire()  # three requests of other answers in this second

    with ncbi_budget_wait(0.1):
        outcome = fetch_and_cache(queries=[QUERY], max_per_query=10)

    assert (outcome.busy, outcome.unavailable, outcome.found) == (True, False, 0)
    assert outcome.errors[0].startswith(f"esearch {QUERY!r}: No request was sent to NCBI E-utilities esearch.fcgi")
    assert fake_eutils.seen == []


@pytest.mark.parametrize(("api_key", "limit"), [("", 3), ("fake-key", 10)])
def test_the_budget_is_ten_requests_per_second_with_an_api_key(
    api_key: str, limit: int, fake_eutils: FakeEutils, eutils_dir: Path, settings: object
) -> None:
    settings.NCBI_API_KEY = f"{api_key}-{uuid.uuid4().hex}" if api_key else ""  # type: ignore[attr-defined]
    fake_eutils.respond_rate_limited(
        "/esearch.fcgi",
        (eutils_dir / "biomcp/esearch_pubmed_json_mlh1_g67e_1hit.json").read_text(),
        per_second=limit,
        rate_limited_body=(eutils_dir / "biomcp/esummary_error_429_rate_limit_exceeded.json").read_text(),
    )
    client = eutils_client()
    assert client.limiter.limit == limit
    if not api_key:
        return  # the keyless window is shared with other tests; its 3/s is tested in test_ratelimit.py

    for _ in range(limit + 1):
        client.esearch("probe")

    times = sorted(seen.at for seen in fake_eutils.requests("/esearch.fcgi"))
    assert fake_eutils.rejected == []
    assert len(times) == limit + 1
    assert times[-1] - times[0] >= 1.0  # the eleventh waited for the window, not for a 429
    assert [params.get("api_key") for params in (s.params for s in fake_eutils.seen)] == [
        settings.NCBI_API_KEY  # type: ignore[attr-defined]
    ] * (limit + 1)


def test_a_search_held_up_by_a_slow_identical_one_goes_on_itself_after_its_wait(fake_eutils: FakeEutils) -> None:
    # A worker fetching the same query may queue for the budget for long; an answer must not wait for it.
    from pubmed.singleflight import flight_key, single_flight

    pmids = sorted(fake_eutils.articles)[:2]
    _serve(fake_eutils, pmids)
    key = flight_key("fetch_and_cache", 10, True, normalise_term(QUERY))
    with single_flight(key, wait_seconds=0, lease_seconds=60) as held:
        assert held.held
        outcome = fetch_and_cache(queries=[QUERY], max_per_query=10, coalesce_wait_seconds=0.2)

    assert (outcome.coalesced, outcome.found, outcome.new) == (True, 2, 2)
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1
