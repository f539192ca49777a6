"""Evidence Scout fixtures: the fake E-utilities over the real corpus, fake LLM servers, a drug profile file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.chat.conftest import FAKE_KEY
from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    corpus,
    corpus_eutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)
from tests.research.scout.fakes import ScoutLlm

DRUG, DISEASE = "insulin", "diabetes"
PROFILE = {
    "synonyms": ["insulin glargine", "insulin therapy"],
    "targets": ["INSR"],
    "mechanisms": ["glucose uptake"],
    "atc_codes": ["A10A"],
    "atc_descriptions": ["insulins and analogues"],
    "drug_type": "protein",
}


@pytest.fixture
def profile_file(tmp_path: Path) -> Path:
    path = tmp_path / "insulin.json"
    path.write_text(json.dumps(PROFILE))
    return path


@pytest.fixture
def scout_llm(_llm_server: HTTPServer, settings) -> Iterator[Callable[[str], ScoutLlm]]:
    """Return a function that points LLM_PROVIDER at a fake server for `provider` and returns the fake."""

    def build(provider: str) -> ScoutLlm:
        _llm_server.clear()
        settings.LLM_PROVIDER = provider
        settings.LLM_MODEL = "claude-test" if provider == "anthropic" else "llama-test"
        settings.LLM_MAX_RETRIES = 0
        settings.LLM_TIMEOUT_SECONDS = 5.0
        settings.ANTHROPIC_API_KEY = FAKE_KEY
        settings.ANTHROPIC_BASE_URL = _llm_server.url_for("/").rstrip("/")
        settings.OPENAI_BASE_URL = _llm_server.url_for("/v1")
        return ScoutLlm(_llm_server, provider)

    yield build
    _llm_server.clear()
