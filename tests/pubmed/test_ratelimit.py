"""The NCBI rate limiter: one budget for every process, through Redis or PostgreSQL, never per process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
from structlog.testing import capture_logs

from pubmed.clients import EutilsClient, EutilsUnavailable
from pubmed.models import NcbiRequestSlot
from pubmed.ratelimit import PostgresRateLimiter, RedisRateLimiter, ncbi_rate_limiter
from tests.conftest import BASE_DIR, database_url_for_subprocess, free_port
from tests.pubmed.conftest import FakeEutils

PROCESSES = 4
REQUESTS_PER_PROCESS = 2

# Each child builds the client exactly as the product does (settings from the environment), says it is
# ready, waits for the common start signal so all of them compete for the budget at once, then searches.
_CHILD = """
import os, pathlib, time
import django
django.setup()
from pubmed.clients import eutils_client
client = eutils_client()
signals = pathlib.Path(os.environ["RATE_TEST_SIGNALS"])
(signals / f"ready-{os.getpid()}").touch()
while not (signals / "go").exists():
    time.sleep(0.01)
for _ in range(int(os.environ["RATE_TEST_REQUESTS"])):
    client.esearch("rate limit probe")
"""


def _max_in_any_window(times: list[float], window: float = 1.0) -> int:
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t - times[i] < window) for i in range(len(times)))


def _serve_esearch_like_ncbi(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    fake_eutils.respond_rate_limited(
        "/esearch.fcgi",
        (eutils_dir / "biomcp/esearch_pubmed_json_mlh1_g67e_1hit.json").read_text(),
        per_second=3,
        rate_limited_body=(eutils_dir / "biomcp/esummary_error_429_rate_limit_exceeded.json").read_text(),
    )


def _run_competing_processes(*, fake_eutils: FakeEutils, redis_url: str, signals: Path) -> list[tuple[int, str]]:
    """Run PROCESSES product processes searching at once; return each one's exit code and stderr."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url_for_subprocess(),
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": "",
        "NCBI_EUTILS_BASE_URL": fake_eutils.server.url_for("/"),
        "NCBI_API_KEY": "",  # no key: NCBI's 3 requests per second
        # A refused request fails its process at once instead of being retried away.
        "NCBI_MAX_RETRIES": "0",
        "LOG_FORMAT": "json",
        "RATE_TEST_SIGNALS": str(signals),
        "RATE_TEST_REQUESTS": str(REQUESTS_PER_PROCESS),
    }
    children = [
        subprocess.Popen([sys.executable, "-c", _CHILD], cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(PROCESSES)
    ]
    deadline = time.monotonic() + 120
    while len(list(signals.glob("ready-*"))) < PROCESSES and time.monotonic() < deadline:
        if any(child.poll() is not None for child in children):
            break
        time.sleep(0.05)
    (signals / "go").touch()
    results = []
    for child in children:
        _, stderr = child.communicate(timeout=120)
        results.append((child.returncode, stderr))
    return results


@pytest.mark.parametrize("store", ["postgresql", "redis"])
def test_competing_processes_stay_within_three_requests_per_second(
    store: str, fake_eutils: FakeEutils, eutils_dir: Path, redis_url: str, tmp_path: Path
) -> None:
    _serve_esearch_like_ncbi(fake_eutils, eutils_dir)
    child_redis_url = redis_url if store == "redis" else ""

    results = _run_competing_processes(fake_eutils=fake_eutils, redis_url=child_redis_url, signals=tmp_path)

    assert [code for code, _ in results] == [0] * PROCESSES, [err[-2000:] for _, err in results]
    assert fake_eutils.rejected == []
    times = [seen.at for seen in fake_eutils.requests("/esearch.fcgi")]
    assert len(times) == PROCESSES * REQUESTS_PER_PROCESS
    assert _max_in_any_window(times) <= 3
    # 8 requests at 3 per second: the last two wait for two windows to pass after the first three.
    assert max(times) - min(times) >= 2.0


def test_threads_of_one_process_share_the_postgresql_window(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    _serve_esearch_like_ncbi(fake_eutils, eutils_dir)
    # The window's margin covers the time from a slot to its request's arrival, which here (four client threads
    # and the server's thread sharing one interpreter on a busy CI machine) has exceeded 50 ms. Threads that
    # did not share the window would still send all eight requests at once.
    limiter = PostgresRateLimiter(budget=f"test-{uuid.uuid4().hex}", limit=3, window_seconds=1.3)
    client = EutilsClient(base_url=fake_eutils.server.url_for("/"), tool="medcite-tests", max_retries=0,
                          limiter=limiter)
    threads = [threading.Thread(target=lambda: [client.esearch("probe") for _ in range(2)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    times = [seen.at for seen in fake_eutils.requests("/esearch.fcgi")]
    assert len(times) == 8
    assert fake_eutils.rejected == []
    assert _max_in_any_window(times) <= 3
    assert max(times) - min(times) >= 2.0  # three windows: the last two requests wait for two to pass


@pytest.mark.django_db
def test_slots_are_taken_outside_the_callers_transaction() -> None:
    budget = f"test-{uuid.uuid4().hex}"
    PostgresRateLimiter(budget=budget, limit=3, window_seconds=1.1).acquire()
    # The test runs inside a transaction; the slot was committed on the limiter's own connection, so it
    # is visible here and to every other process at once.
    assert NcbiRequestSlot.objects.filter(budget=budget).count() == 1


@pytest.mark.django_db
def test_old_slots_leave_the_table() -> None:
    budget = f"test-{uuid.uuid4().hex}"
    limiter = PostgresRateLimiter(budget=budget, limit=2, window_seconds=0.2)
    for _ in range(5):
        limiter.acquire()
    assert NcbiRequestSlot.objects.filter(budget=budget).count() <= 2


def test_unreachable_database_fails_the_request_without_sending_it(
    fake_eutils: FakeEutils, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import connections

    # New connections (the limiter's own) go to a port nothing listens on; the test's connection stays.
    monkeypatch.setitem(connections.settings, "default", {
        **connections.settings["default"], "HOST": "127.0.0.1", "PORT": str(free_port()), "OPTIONS": {}
    })
    limiter = PostgresRateLimiter(budget="test-unreachable", limit=3, window_seconds=1.1)
    client = EutilsClient(base_url=fake_eutils.server.url_for("/"), tool="medcite-tests", limiter=limiter)
    with pytest.raises(EutilsUnavailable, match=r"^No request was sent to NCBI E-utilities esearch.fcgi: "
                                                 r"PostgreSQL could not record the NCBI request"):
        client.esearch("probe")
    assert fake_eutils.seen == []


def test_redis_outage_is_logged_and_postgresql_takes_over(redis_url: str, db: None) -> None:
    budget = f"test-{uuid.uuid4().hex}"
    fallback = PostgresRateLimiter(budget=budget, limit=3, window_seconds=1.1)
    dead = redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.5)
    limiter = RedisRateLimiter(client=dead, key=budget, limit=3, window_seconds=1.1, fallback=fallback)
    with capture_logs() as logs:
        limiter.acquire()
        limiter.acquire()
    assert [log["event"] for log in logs] == ["ncbi_rate_limiter_redis_unavailable"]
    assert logs[0]["fallback"] == "postgresql"
    assert NcbiRequestSlot.objects.filter(budget=budget).count() == 2


def test_limiter_choice_follows_settings(redis_url: str) -> None:
    local = ncbi_rate_limiter(redis_url="", api_key="", requests_per_second=3, margin_seconds=0.1)
    assert isinstance(local, PostgresRateLimiter)
    assert (local.limit, local.window_seconds) == (3, 1.1)
    shared = ncbi_rate_limiter(redis_url=redis_url, api_key="secret", requests_per_second=10, margin_seconds=0.1)
    assert isinstance(shared, RedisRateLimiter)
    assert shared.limit == 10
    assert "secret" not in shared.key
    # While Redis is down the same budget (same key, same limit) continues in PostgreSQL.
    fallback = shared._fallback
    assert isinstance(fallback, PostgresRateLimiter)
    assert (fallback.budget, fallback.limit, fallback.window_seconds) == (shared.key, 10, 1.1)
