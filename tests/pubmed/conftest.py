"""A fake NCBI E-utilities server on 127.0.0.1 that replays the real recordings in ../shared/data/eutils."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

import pytest
from lxml import etree
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pubmed.parsers import AbstractRecord, parse_pubmed_xml

if TYPE_CHECKING:
    from tests.pubmed.corpus import Corpus, CorpusEutils

XML_HEADER = (
    b'<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)


@pytest.fixture(scope="session")
def eutils_dir(shared_data: Path) -> Path:
    return shared_data / "eutils"


@pytest.fixture(scope="session")
def efetch_files(eutils_dir: Path) -> list[Path]:
    """Every real efetch PubMed XML recording."""
    return sorted(p for p in eutils_dir.rglob("*.xml") if "efetch" in str(p.relative_to(eutils_dir)))


@pytest.fixture(scope="session")
def recorded_articles(efetch_files: list[Path]) -> dict[str, bytes]:
    """PMID → the recorded <PubmedArticle> element (newest recording wins for duplicates)."""
    articles: dict[str, bytes] = {}
    for path in efetch_files:
        root = etree.fromstring(path.read_bytes(), parser=etree.XMLParser(resolve_entities=False, no_network=True))
        for article in root.findall("PubmedArticle"):
            pmid = article.findtext("MedlineCitation/PMID")
            articles.setdefault(pmid, etree.tostring(article))
    return articles


@pytest.fixture(scope="session")
def recorded_records(efetch_files: list[Path]) -> dict[str, AbstractRecord]:
    records: dict[str, AbstractRecord] = {}
    for path in efetch_files:
        for record in parse_pubmed_xml(path.read_bytes()):
            records.setdefault(record.pmid, record)
    return records


def article_set(articles: list[bytes]) -> bytes:
    return XML_HEADER + b"<PubmedArticleSet>\n" + b"\n".join(articles) + b"\n</PubmedArticleSet>\n"


def esearch_json(*, pmids: list[str], count: int | None = None, retstart: int = 0, translation: str = "",
                 webenv: str = "") -> str:
    """An esearch answer in NCBI's JSON shape (as in the biomcp recordings: numbers as strings)."""
    result: dict[str, object] = {
        "count": str(len(pmids) if count is None else count),
        "retmax": str(len(pmids)),
        "retstart": str(retstart),
        "idlist": pmids,
        "translationset": [],
        "querytranslation": translation,
    }
    if webenv:
        result.update(querykey="1", webenv=webenv)
    return json.dumps({"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result})


@dataclass
class Seen:
    """One request as the fake server saw it."""

    at: float
    path: str
    method: str
    params: dict[str, str]


@dataclass
class FakeEutils:
    """Handlers for esearch/efetch/esummary plus a log of every request with its arrival time."""

    server: HTTPServer
    articles: dict[str, bytes]
    seen: list[Seen] = field(default_factory=list)
    esearch_ids: dict[str, list[str]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rejected: list[Seen] = field(default_factory=list)

    def record(self, request: Request) -> dict[str, str]:
        params = {key: value for key, value in request.args.items()}
        if request.method == "POST":
            params.update({k: v[-1] for k, v in parse_qs(request.get_data(as_text=True)).items()})
        with self.lock:
            self.seen.append(Seen(at=time.time(), path=request.path, method=request.method, params=params))
        return params

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    def efetch_handler(self, request: Request) -> Response:
        params = self.record(request)
        ids = [pmid for pmid in params.get("id", "").split(",") if pmid]
        body = article_set([self.articles[pmid] for pmid in ids if pmid in self.articles])
        return Response(body, content_type="text/xml; charset=UTF-8")

    def esearch_handler(self, request: Request) -> Response:
        params = self.record(request)
        ids = self.esearch_ids.get(params.get("term", ""), [])
        start, size = int(params.get("retstart", 0)), int(params.get("retmax", 20))
        return Response(
            esearch_json(pmids=ids[start:start + size], count=len(ids), retstart=start,
                         translation=params.get("term", "")),
            content_type="application/json",
        )

    def serve(self) -> FakeEutils:
        """Answer esearch from `esearch_ids` and efetch from the recorded articles."""
        self.server.expect_request("/esearch.fcgi").respond_with_handler(self.esearch_handler)
        self.server.expect_request("/efetch.fcgi").respond_with_handler(self.efetch_handler)
        return self

    def respond(self, path: str, body: str | bytes, *, status: int = 200, content_type: str = "application/json",
                headers: dict[str, str] | None = None) -> None:
        def handler(request: Request) -> Response:
            self.record(request)
            return Response(body, status=status, content_type=content_type, headers=headers or {})

        self.server.expect_request(path).respond_with_handler(handler)

    def respond_rate_limited(self, path: str, body: str, *, per_second: int, rate_limited_body: str) -> None:
        """Answer `path` with `body`, but like NCBI refuse with HTTP 429 a request that would be the
        (per_second + 1)th to arrive within one second; refused requests are kept in `rejected`."""

        def handler(request: Request) -> Response:
            with self.lock:
                arrived = Seen(at=time.time(), path=request.path, method=request.method, params=dict(request.args))
                refused = {id(seen) for seen in self.rejected}
                answered = [seen for seen in self.seen if id(seen) not in refused and arrived.at - seen.at < 1.0]
                self.seen.append(arrived)
                if len(answered) >= per_second:
                    self.rejected.append(arrived)
                    return Response(rate_limited_body, status=429, content_type="application/json")
            return Response(body, content_type="application/json")

        self.server.expect_request(path).respond_with_handler(handler)

    def respond_sequence(self, path: str, responses: list[tuple[int, str | bytes, dict[str, str]]],
                         content_type: str = "application/json") -> None:
        """Answer successive requests to `path` with `responses` in turn (the last one repeats)."""
        remaining = list(responses)

        def handler(request: Request) -> Response:
            self.record(request)
            status, body, headers = remaining.pop(0) if len(remaining) > 1 else remaining[0]
            return Response(body, status=status, content_type=content_type, headers=headers)

        self.server.expect_request(path).respond_with_handler(handler)


@pytest.fixture
def fake_eutils(httpserver: HTTPServer, settings: object, recorded_articles: dict[str, bytes],
                db: None) -> Iterator[FakeEutils]:
    """Point the client at the fake server, with fast retries and a fresh per-test rate-limit budget.

    Without Redis the budget lives in PostgreSQL, hence the database access.
    """
    settings.NCBI_EUTILS_BASE_URL = httpserver.url_for("/")
    # A unique fake key: 10 requests/s and a limiter window no other test shares.
    settings.NCBI_API_KEY = f"fake-test-key-{uuid.uuid4().hex}"
    settings.NCBI_TOOL = "medcite-tests"
    settings.NCBI_EMAIL = "tests@example.org"
    settings.NCBI_TIMEOUT_SECONDS = 2.0
    settings.NCBI_MAX_RETRIES = 3
    settings.NCBI_BACKOFF_INITIAL_SECONDS = 0.01
    settings.NCBI_BACKOFF_MAX_SECONDS = 0.05
    settings.REDIS_URL = ""
    settings.CELERY_BROKER_URL = ""
    yield FakeEutils(server=httpserver, articles=recorded_articles)
    httpserver.clear()


@pytest.fixture(scope="session")
def corpus(efetch_files: list[Path], shared_data: Path) -> Corpus:
    """The recorded efetch articles plus the 1,000 PubMedQA abstracts, indexed for the fake esearch."""
    from tests.pubmed.corpus import Corpus

    return Corpus.build(efetch_files=efetch_files, pubmedqa=shared_data / "pubmedqa" / "ori_pqal.json")


@pytest.fixture
def corpus_eutils(fake_eutils: FakeEutils, corpus: Corpus) -> CorpusEutils:
    """The fake E-utilities answering esearch and efetch from the corpus (fresh request log per test)."""
    from tests.pubmed.corpus import CorpusEutils

    return CorpusEutils(corpus=corpus).serve(fake_eutils.server)
