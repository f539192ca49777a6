"""A fake ClinicalTrials.gov on 127.0.0.1 that replays the real v2 recordings in ../shared/data/ctgov."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.cache import cache
from pytest_httpserver import HTTPServer

from tests.conftest import fake_http_server

API_PREFIX = "/api/v2/"


@pytest.fixture(autouse=True)
def _no_real_ctgov(settings) -> None:
    """Point every trials test at a closed local port: a test that forgot its fake server fails loudly."""
    settings.CTGOV_BASE_URL = "http://127.0.0.1:9/api/v2/"
    settings.CTGOV_BACKOFF_INITIAL_SECONDS = 0.0
    settings.CTGOV_BACKOFF_MAX_SECONDS = 0.0
    settings.CTGOV_MAX_RETRIES = 2
    settings.CTGOV_TIMEOUT_SECONDS = 2.0


@pytest.fixture(autouse=True)
def _fresh_throttle_counters() -> Iterator[None]:
    """DRF throttles count in the default cache; start and end every test with an empty one."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(scope="session")
def _ctgov_server() -> Iterator[HTTPServer]:
    with fake_http_server() as server:
        yield server


@pytest.fixture
def ctgov(_ctgov_server: HTTPServer, settings) -> Iterator[HTTPServer]:
    """The fake server, empty, with CTGOV_BASE_URL pointing at it; unexpected requests fail the test."""
    _ctgov_server.clear()
    settings.CTGOV_BASE_URL = _ctgov_server.url_for(API_PREFIX)
    yield _ctgov_server
    _ctgov_server.check_handler_errors()
    _ctgov_server.clear()


@pytest.fixture
def ctgov_dir(shared_data: Path) -> Path:
    return shared_data / "ctgov"


@pytest.fixture
def recording(ctgov_dir: Path) -> Callable[[str], bytes]:
    """Return the raw bytes of a recording, e.g. recording("biomcp/search_phelan_limit5_20260811.json")."""

    def read(name: str) -> bytes:
        return (ctgov_dir / name).read_bytes()

    return read
