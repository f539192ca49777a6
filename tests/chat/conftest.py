"""Chat fixtures: the seeded library, users, fake LLM servers and a fake E-utilities, all on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from pytest_httpserver import HTTPServer

from chat.answer_settings import AnswerSettings, answer_settings
from tests.chat.fakes import FakeAnthropic, FakeOpenAI
from tests.conftest import fake_http_server, seed_library
from tests.factories import UserFactory

FAKE_KEY = "sk-ant-test-not-a-real-key"


@pytest.fixture(autouse=True)
def _no_real_services(settings) -> Iterator[None]:
    """Point every external service at a closed local port so a stray live call fails loudly."""
    settings.ANTHROPIC_API_KEY = FAKE_KEY
    settings.ANTHROPIC_BASE_URL = "http://127.0.0.1:9"
    settings.OPENAI_API_KEY = "sk-test-not-a-real-key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.NCBI_EUTILS_BASE_URL = "http://127.0.0.1:9/entrez/eutils/"
    settings.NCBI_MAX_RETRIES = 0
    settings.CTGOV_BASE_URL = "http://127.0.0.1:9/api/v2/"
    settings.LLM_PROVIDER = "extractive"
    settings.ANSWER_SETTINGS = {}
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def library(db) -> int:
    """Load the curated landmark studies and tag vocabulary (the real seed) into the test database."""
    from evidence.models import Study

    seed_library()

    return Study.objects.count()


@pytest.fixture
def user(db):
    return UserFactory(username="dr-ada")


@pytest.fixture
def other_user(db):
    return UserFactory(username="dr-grace")


@pytest.fixture(scope="session")
def _llm_server() -> Iterator[HTTPServer]:
    with fake_http_server() as server:
        yield server


@pytest.fixture
def fake_anthropic(_llm_server: HTTPServer, settings) -> Iterator[FakeAnthropic]:
    _llm_server.clear()
    settings.ANTHROPIC_BASE_URL = _llm_server.url_for("/").rstrip("/")
    fake = FakeAnthropic(_llm_server)
    yield fake
    _llm_server.clear()


@pytest.fixture
def fake_openai(_llm_server: HTTPServer, settings) -> Iterator[FakeOpenAI]:
    _llm_server.clear()
    settings.OPENAI_BASE_URL = _llm_server.url_for("/v1")
    fake = FakeOpenAI(_llm_server)
    yield fake
    _llm_server.clear()


@pytest.fixture
def llm_settings() -> Callable[..., AnswerSettings]:
    """Build pipeline settings for a provider with test-sized timeouts and no SDK retries."""

    def build(provider: str = "anthropic", **overrides: Any) -> AnswerSettings:
        values: dict[str, Any] = {
            "provider": provider,
            "model": "claude-test" if provider == "anthropic" else "llama-test",
            "timeout_seconds": 2.0,
            "max_retries": 0,
            "max_tool_rounds": 3,
            # The scripted fake servers answer the generation; the model-PICO call has its own test.
            "model_pico": False,
            # Likewise the model's claim check (tests/chat/test_llm_claim_check.py turns it on).
            "model_claim_check": False,
        }
        values.update(overrides)
        return answer_settings(**values)

    return build


@pytest.fixture(scope="session")
def _eutils_server() -> Iterator[HTTPServer]:
    with fake_http_server() as server:
        yield server


@pytest.fixture
def eutils(_eutils_server: HTTPServer, settings) -> Iterator[HTTPServer]:
    """A fake NCBI E-utilities, empty, with NCBI_EUTILS_BASE_URL pointing at it."""
    _eutils_server.clear()
    settings.NCBI_EUTILS_BASE_URL = _eutils_server.url_for("/entrez/eutils/")
    settings.NCBI_MAX_RETRIES = 0
    yield _eutils_server
    _eutils_server.check_handler_errors()
    _eutils_server.clear()


@pytest.fixture
def eutils_recording(shared_data: Path) -> Callable[[str], bytes]:
    def read(name: str) -> bytes:
        return (shared_data / "eutils" / name).read_bytes()

    return read


@pytest.fixture
def esearch_for(eutils_recording: Callable[[str], bytes]) -> Callable[[list[str]], str]:
    """Return the recorded esearch JSON answer with its id list set to `pmids` (the only field changed)."""

    def build(pmids: list[str]) -> str:
        body = json.loads(eutils_recording("biomcp/esearch_pubmed_json_pten_d326n_3hits.json"))
        body["esearchresult"].update(count=str(len(pmids)), retmax=str(len(pmids)), idlist=pmids)
        return json.dumps(body)

    return build


STORED_RECORDINGS = (
    "biomcp/efetch_pubmed_22663011.xml",
    "biopython/efetch_pubmed_html_escaping_28775130.xml",
    "biopython/efetch_pubmed_html_tags_27797938.xml",
    "pubmed-client/efetch_pubmed_xml/35123456.xml",
    "pubmed-client/efetch_pubmed_xml/31978945.xml",
)


@pytest.fixture
def stored_abstracts(db, shared_data: Path) -> list[str]:
    """Store five real PubMed records (recorded efetch XML) with real embeddings; return their PMIDs."""
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    records = [
        record
        for name in STORED_RECORDINGS
        for record in parse_pubmed_xml((shared_data / "eutils" / name).read_bytes())
    ]
    return abstracts_upsert(records=records, embed=True).pmids
