"""Fixtures shared by every test: the real database, a real Redis, shared data, a Celery worker."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from pytest_httpserver import HTTPServer

BASE_DIR = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("MEDCITE_SHARED_DATA", BASE_DIR.parent / "shared" / "data"))

# Fake credentials: a stray call to a real service fails loudly instead of spending a real key.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """Give every pytest process its own test database so parallel runs never collide."""
    from django.conf import settings

    test_settings = settings.DATABASES["default"].setdefault("TEST", {})
    test_settings["NAME"] = f"{test_settings.get('NAME') or 'test_medcite'}_{os.getpid()}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: object) -> Iterator[None]:
    """Create the test database as pytest-django does; before it is dropped, end this run's leftover sessions.

    ORM calls made while Playwright's event loop runs in the test thread get a connection of their own
    (asgiref keeps connections per context) that nothing closes, and DROP DATABASE then refuses with
    "being accessed by other users", leaving a test database behind on every run with browser tests.
    """
    yield
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:  # type: ignore[attr-defined]
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    connection.close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Return ../shared/data, or skip: the recordings and evaluation sets live there, not in the repo."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}; clone the project with ../shared beside it")
    return SHARED_DATA


@contextmanager
def fake_http_server() -> Iterator[HTTPServer]:
    """Run a fake HTTP service on 127.0.0.1 for a session.

    Threaded, so a request a timeout test abandoned never holds up the next one.
    """
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        yield server
    finally:
        server.clear()
        server.stop()


def database_url_for_subprocess() -> str:
    """Return a DATABASE_URL for the database this test process uses, for child processes to share it.

    Call it inside a test with database access, so it names the test database, not the development one.
    """
    from urllib.parse import quote

    from django.db import connection

    db = connection.settings_dict
    user = quote(db["USER"] or "", safe="")
    password = quote(str(db["PASSWORD"] or ""), safe="")
    host, port = db["HOST"] or "", db["PORT"] or ""
    socket_dir = "" if host else db["OPTIONS"].get("host", "")
    netloc = f"{user}:{password}@{host}" + (f":{port}" if port else "")
    query = f"?host={quote(socket_dir, safe='/')}" if socket_dir else ""
    return f"postgresql://{netloc}/{quote(db['NAME'], safe='')}{query}"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _redis_answers(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@contextmanager
def private_redis_server() -> Iterator[str]:
    """Start a redis-server of our own on a free port (no persistence); yield its URL without a db number."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("No Redis is listening and redis-server is not installed (apt-get install redis-server).")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while not _redis_answers(url):
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"redis-server did not start on port {port} within 10 s")
        time.sleep(0.05)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(5)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """Return the URL of a real Redis: REDIS_URL, the local one on 6379, or one started here."""
    for url in filter(None, [os.environ.get("TEST_REDIS_URL"), "redis://127.0.0.1:6379/15"]):
        if _redis_answers(url):
            yield url
            return
    with private_redis_server() as server:
        yield f"{server}/0"


def _reset_broker_pool(app: object) -> None:
    """Drop every cached broker connection and producer pool so the next publish uses the current broker_url.

    kombu keeps process-global pools keyed by connection; closing one pool but leaving it registered
    makes a later publish fail with "Acquire on closed pool", so the global registry is reset too.
    """
    from kombu import pools

    pools.reset()
    app._pool = None  # type: ignore[attr-defined]
    app.amqp._producer_pool = None  # type: ignore[attr-defined]


@pytest.fixture
def celery_worker(redis_url: str, transactional_db: None) -> Iterator[object]:
    """Run a real Celery worker thread consuming from a real Redis broker for one test."""
    from celery.contrib.testing.worker import start_worker

    from config.celery import app

    keys = ("broker_url", "task_always_eager", "broker_transport_options")
    saved = {key: app.conf[key] for key in keys}
    # A key prefix per test process keeps parallel test runs on one Redis from stealing each other's tasks.
    app.conf.update(
        broker_url=redis_url,
        task_always_eager=False,
        broker_transport_options={"global_keyprefix": f"medcite-test-{os.getpid()}:"},
    )
    _reset_broker_pool(app)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10) as worker:
            yield worker
    finally:
        app.conf.update(**saved)
        _reset_broker_pool(app)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that starts Chromium `browser` and every test that starts a Celery worker `celery`,
    whether or not its module says so, so `make test-fast` (-m "not browser and not celery") leaves them out."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "browser" in fixtures and item.get_closest_marker("browser") is None:
            item.add_marker(pytest.mark.browser)
        if {"celery_worker", "production_stack"} & set(fixtures) and item.get_closest_marker("celery") is None:
            item.add_marker(pytest.mark.celery)


# --- The seeded library, loaded once per test process ------------------------------------------------

_SEED_ROWS: dict[str, dict[str, bytes]] = {}  # seed -> table -> its rows as PostgreSQL COPY text


def _table_counts() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
        counts = {}
        for table in tables:
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
    return counts


def seed_library() -> None:
    """Load the real seed - curated library, tag vocabulary and decision aids, as `seed_evidence` writes
    them - into the test database.

    The first call in a test process runs the seed services into empty tables and keeps the rows they
    wrote; later calls into the same empty tables copy those rows back with COPY (milliseconds instead
    of the seed's ~1.5 s of per-row saves and history). Where the tables are not empty (a test added
    its own rows first), the seed services run as `seed_evidence` would. The seed itself is tested in
    tests/evidence/test_seed.py and test_vocabulary.py.
    """
    from evidence.services.seed import evidence_seed
    from evidence.services.seed_aids import decision_aids_seed
    from evidence.services.vocabulary_seed import vocabulary_seed

    _seed("library", evidence_seed, vocabulary_seed, decision_aids_seed)


def seed_vocabulary() -> None:
    """Load only the real tag vocabulary and shorthand (`vocabulary_seed`), kept and copied back like
    `seed_library` (the per-row seed costs ~2 s a test)."""
    from evidence.services.vocabulary_seed import vocabulary_seed

    _seed("vocabulary", vocabulary_seed)


def _seed(name: str, *services: Callable[[], object]) -> None:
    from django.apps import apps
    from django.core.management.color import no_style
    from django.db import connection, transaction

    before = _table_counts()
    kept = _SEED_ROWS.get(name)
    if kept is not None and all(before.get(table) == 0 for table in kept):
        models = [model for model in apps.get_models(include_auto_created=True) if model._meta.db_table in kept]
        with transaction.atomic(), connection.cursor() as cursor:  # foreign keys are checked at commit
            for table, rows in kept.items():
                with cursor.cursor.copy(f'COPY "{table}" FROM STDIN') as copy:
                    copy.write(rows)
            for statement in connection.ops.sequence_reset_sql(no_style(), models):
                cursor.execute(statement)
        return
    with transaction.atomic():
        for service in services:
            service()
    if kept is None:
        written = [table for table, count in _table_counts().items() if count != before.get(table, 0)]
        if all(before.get(table, 0) == 0 for table in written):
            rows: dict[str, bytes] = {}
            with connection.cursor() as cursor:
                for table in written:
                    with cursor.cursor.copy(f'COPY "{table}" TO STDOUT') as copy:
                        rows[table] = b"".join(bytes(block) for block in copy)
            _SEED_ROWS[name] = rows


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing() -> Iterator[None]:
    """Hash the tests' passwords with MD5: PBKDF2's million rounds cost 0.23 s per user created or logged in
    on the 2-core machine. Only the test process changes; the product's settings keep PBKDF2."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield
