"""Research-page fixtures: fake ClinicalTrials.gov, E-utilities and Anthropic servers on 127.0.0.1, stored abstracts."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.chat.conftest import (  # noqa: F401  (fixtures)
    FAKE_KEY,
    _eutils_server,
    _llm_server,
    _no_real_services,
    esearch_for,
    eutils,
    eutils_recording,
    user,
)
from tests.research.fakes import FakeResearchAnthropic
from tests.trials.conftest import _ctgov_server, _no_real_ctgov, ctgov, ctgov_dir, recording  # noqa: F401

# Recorded efetch records stored (without vectors) for Tablizer tests: PMID -> recording.
ABSTRACT_RECORDINGS = {
    "22663011": "biomcp/efetch_pubmed_22663011.xml",
    "28775130": "biopython/efetch_pubmed_html_escaping_28775130.xml",
    "27797938": "biopython/efetch_pubmed_html_tags_27797938.xml",
    "35123456": "pubmed-client/efetch_pubmed_xml/35123456.xml",
    "31978945": "pubmed-client/efetch_pubmed_xml/31978945.xml",
}
MELANOMA = "biomcp/search_melanoma_recruiting_limit3_20260811.json"
MELANOMA_NCTS = ["NCT06970236", "NCT04114136", "NCT04318717"]


@pytest.fixture
def research_llm(_llm_server: HTTPServer, settings) -> Iterator[FakeResearchAnthropic]:  # noqa: F811
    """The fake Anthropic API, with LLM_PROVIDER=anthropic pointing at it."""
    _llm_server.clear()
    settings.LLM_PROVIDER = "anthropic"
    settings.LLM_MODEL = "claude-test"
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_TIMEOUT_SECONDS = 5.0
    settings.ANTHROPIC_API_KEY = FAKE_KEY
    settings.ANTHROPIC_BASE_URL = _llm_server.url_for("/").rstrip("/")
    fake = FakeResearchAnthropic(_llm_server)
    yield fake
    _llm_server.clear()


@pytest.fixture
def abstracts(db, shared_data: Path) -> list[str]:
    """Store five real PubMed records (recorded efetch XML) without vectors; return their PMIDs."""
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    records = [
        record
        for name in ABSTRACT_RECORDINGS.values()
        for record in parse_pubmed_xml((shared_data / "eutils" / name).read_bytes())
    ]
    return abstracts_upsert(records=records, embed=False).pmids


@pytest.fixture
def esearch_serving(eutils: HTTPServer, esearch_for: Callable[[list[str]], str]) -> Callable[[list[str]], HTTPServer]:  # noqa: F811
    """Make the fake E-utilities answer every esearch with the recorded JSON listing `pmids`."""

    def serve(pmids: list[str]) -> HTTPServer:
        eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(
            esearch_for(pmids), content_type="application/json"
        )
        return eutils

    return serve


@pytest.fixture
def melanoma_search(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> HTTPServer:  # noqa: F811
    """Serve the recorded 'melanoma, recruiting' search page (3 of 480 trials) for every search."""
    ctgov.expect_request("/api/v2/studies").respond_with_data(recording(MELANOMA), content_type="application/json")
    return ctgov


@pytest.fixture
def study_records(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> Callable[[dict[str, str | None]], None]:  # noqa: F811
    """Serve single-study GETs: NCT id -> the search recording holding that study (None: HTTP 404)."""

    def serve(studies: dict[str, str | None]) -> None:
        def handler(request: Request) -> Response:
            nct_id = request.path.rsplit("/", 1)[-1]
            source = studies.get(nct_id)
            if source is None:
                return Response(json.dumps({"message": f"Study {nct_id} not found"}), status=404)
            body = json.loads(recording(source))
            study = next(
                item for item in body["studies"] if item["protocolSection"]["identificationModule"]["nctId"] == nct_id
            )
            return Response(json.dumps(study), content_type="application/json")

        ctgov.expect_request(re.compile(r"^/api/v2/studies/NCT\d{8}$"), method="GET").respond_with_handler(handler)

    return serve


