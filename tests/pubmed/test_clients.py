"""The E-utilities client against a fake NCBI on 127.0.0.1 replaying real recordings."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from werkzeug import Request, Response

from pubmed.clients import EutilsError, EutilsUnavailable, PubmedSummary, eutils_client
from tests.pubmed.conftest import FakeEutils, esearch_json


def test_esearch_reads_real_json_and_sends_tool_email_key(fake_eutils: FakeEutils, eutils_dir: Path,
                                                          settings: object) -> None:
    fake_eutils.respond("/esearch.fcgi", (eutils_dir / "biomcp/esearch_pubmed_json_pten_d326n_3hits.json").read_text())
    result = eutils_client().esearch('("PTEN"[Title/Abstract] AND "D326N"[Title/Abstract])', retmax=5)
    assert result.count == 3
    assert result.pmids == ["32150788", "29373119", "17427195"]
    assert result.query_translation == '"PTEN"[Title/Abstract] AND "D326N"[Title/Abstract]'
    (seen,) = fake_eutils.requests("/esearch.fcgi")
    assert seen.params["tool"] == "medcite-tests"
    assert seen.params["email"] == "tests@example.org"
    assert seen.params["api_key"] == settings.NCBI_API_KEY
    assert seen.params["db"] == "pubmed"
    assert seen.params["retmode"] == "json"
    assert seen.params["retmax"] == "5"


def test_esearch_phrases_not_found_and_zero_hits_are_results_not_errors(fake_eutils: FakeEutils,
                                                                         eutils_dir: Path) -> None:
    fake_eutils.respond(
        "/esearch.fcgi", (eutils_dir / "yeliztli/esearch_pubmed_json_zero_hits_errorlist_warninglist.json").read_text()
    )
    result = eutils_client().esearch("Correction Publication")
    assert (result.count, result.pmids) == (0, [])
    assert result.phrases_not_found == ["Correction", "Publication"]
    assert result.warnings == ["No items found."]


def test_esearch_with_date_range_and_sort(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    fake_eutils.respond("/esearch.fcgi", (eutils_dir / "biomcp/esearch_pubmed_json_mlh1_g67e_1hit.json").read_text())
    result = eutils_client().esearch("MLH1 G67E", mindate="2000", sort="pub_date")
    assert result.pmids == ["18033691"]
    (seen,) = fake_eutils.requests("/esearch.fcgi")
    assert (seen.params["datetype"], seen.params["mindate"], seen.params["maxdate"]) == ("pdat", "2000", "3000")
    assert seen.params["sort"] == "pub_date"


def test_esearch_pages_large_result_sets_through_the_history_server(fake_eutils: FakeEutils,
                                                                    eutils_dir: Path) -> None:
    real = json.loads((eutils_dir / "biomcp/esearch_pubmed_json_apc_E1317Q_count40362_errorlist.json").read_text())
    ids = [str(40000000 + n) for n in range(1200)] + real["esearchresult"]["idlist"]

    def handler(request: Request) -> Response:
        params = fake_eutils.record(request)
        start, size = int(params["retstart"]), int(params["retmax"])
        return Response(esearch_json(pmids=ids[start:start + size], count=len(ids), retstart=start,
                                     webenv="MCID_fake_webenv"), content_type="application/json")

    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(handler)
    result = eutils_client().esearch("cancer", retmax=1200)
    assert result.pmids == ids[:1200]
    assert result.count == 1300
    pages = fake_eutils.requests("/esearch.fcgi")
    windows = [(p.params["retstart"], p.params["retmax"]) for p in pages]
    assert windows == [("0", "500"), ("500", "500"), ("1000", "200")]
    assert pages[0].params["usehistory"] == "y"
    assert [p.params.get("WebEnv") for p in pages[1:]] == ["MCID_fake_webenv", "MCID_fake_webenv"]
    assert "term" not in pages[1].params


@pytest.mark.parametrize("retmax", [10000, -1])
def test_esearch_rejects_impossible_windows(fake_eutils: FakeEutils, retmax: int) -> None:
    with pytest.raises(EutilsError):
        eutils_client().esearch("cancer", retmax=retmax)
    assert fake_eutils.seen == []


def test_efetch_batches_of_200_and_posts_long_id_lists(fake_eutils: FakeEutils) -> None:
    fake_eutils.serve()
    ids = [str(30000000 + n) for n in range(448)] + ["22663011", "31978945"]
    records = eutils_client().efetch(ids)
    assert [r.pmid for r in records] == ["22663011", "31978945"]
    calls = fake_eutils.requests("/efetch.fcgi")
    assert [len(c.params["id"].split(",")) for c in calls] == [200, 200, 50]
    assert [c.method for c in calls] == ["POST", "POST", "GET"]
    assert all(c.params["retmode"] == "xml" and c.params["db"] == "pubmed" for c in calls)


def test_efetch_refuses_non_pmids_before_any_request(fake_eutils: FakeEutils) -> None:
    with pytest.raises(EutilsError, match=r"'PMID:123' is not a PMID: use digits only, e\.g\. 35657320\."):
        eutils_client().efetch(["22663011", "PMID:123"])
    assert fake_eutils.seen == []


def test_esummary_real_json(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    fake_eutils.respond("/esummary.fcgi",
                        (eutils_dir / "yeliztli/esummary_pubmed_json_34313350_27078154.json").read_text())
    summaries = eutils_client().esummary(["34313350", "27078154"])
    assert summaries["34313350"] == PubmedSummary(
        pmid="34313350",
        title="APOE gene ɛ4 allele (388C-526C) effects on serum lipids and risk of coronary artery disease in "
              "southern Chinese Hakka population.",
        journal="J Clin Lab Anal",
        year=2021,
        authors=["Liu Q", "Wu H", "Yu Z", "Huang Q", "Zhong Z"],
        doi="10.1002/jcla.23925",
        pmcid="PMC8418481",
        journal_title="Journal of clinical laboratory analysis",
        pub_date_raw="2021 Sep",
        publication_types=["Journal Article"],
    )
    assert summaries["27078154"].doi == "10.1371/journal.pone.0153593"
    assert summaries["27078154"].year == 2016


def test_esummary_leaves_out_pmids_ncbi_reports_missing(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    body = json.loads((eutils_dir / "yeliztli/esummary_pubmed_json_36723951.json").read_text())
    body["result"]["uids"].append("99999999")
    body["result"]["99999999"] = {"uid": "99999999", "error": "cannot get document summary"}
    fake_eutils.respond("/esummary.fcgi", json.dumps(body))
    summaries = eutils_client().esummary(["36723951", "99999999"])
    assert list(summaries) == ["36723951"]
    assert summaries["36723951"].journal == "JAMA Cardiol"


def test_esummary_all_invalid_ids_is_an_empty_dict(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esummary.fcgi", json.dumps(
        {"header": {"type": "esummary", "version": "0.3"}, "esummaryresult": ["Invalid uid 99999999 at position=0"]}))
    assert eutils_client().esummary(["99999999"]) == {}


@pytest.mark.parametrize(
    ("path", "recording", "message"),
    [
        ("/esummary.fcgi", "biopython/esummary_error_no_id.xml", "Neither query_key nor id specified"),
        ("/esummary.fcgi", "klortho-2012/esummary.error.xml", "Invalid db name specified: fleegle"),
    ],
)
def test_ncbi_xml_error_bodies_with_http_200_raise(fake_eutils: FakeEutils, eutils_dir: Path, path: str,
                                                   recording: str, message: str) -> None:
    fake_eutils.respond(path, (eutils_dir / recording).read_bytes(), content_type="text/xml")
    with pytest.raises(EutilsError) as excinfo:
        eutils_client().esummary(["11850928"])
    assert str(excinfo.value) == f"NCBI E-utilities esummary.fcgi returned an error: {message}"
    assert not isinstance(excinfo.value, EutilsUnavailable)


def test_efetch_xml_error_body_raises(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    fake_eutils.respond("/efetch.fcgi", (eutils_dir / "klortho-2012/esearch.baderror.xml").read_bytes(),
                        content_type="text/xml")
    with pytest.raises(EutilsError, match="instead of records: Invalid db name specified: fleegle"):
        eutils_client().efetch(["22663011"])


def test_json_error_fields_raise(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", json.dumps(
        {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": {"ERROR": "Invalid query syntax"}}))
    with pytest.raises(EutilsError, match=r"^NCBI esearch rejected the query: Invalid query syntax$"):
        eutils_client().esearch("((")
    fake_eutils.server.clear()
    fake_eutils.respond("/esummary.fcgi", json.dumps({"error": "Invalid API key"}))
    with pytest.raises(EutilsError, match=r"^NCBI E-utilities esummary\.fcgi returned an error: Invalid API key$"):
        eutils_client().esummary(["1"])


def test_malformed_efetch_xml_is_a_clear_error(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    data = (eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_bytes()
    fake_eutils.respond("/efetch.fcgi", data[:5000], content_type="text/xml")
    expected = r"^NCBI efetch for 1 PMID\(s\) starting 22663011 returned unusable XML: Malformed XML"
    with pytest.raises(EutilsError, match=expected):
        eutils_client().efetch(["22663011"])


def test_429_with_retry_after_is_honoured(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    rate_limited = (eutils_dir / "biomcp/esummary_error_429_rate_limit_exceeded.json").read_text()
    ok = (eutils_dir / "yeliztli/esummary_pubmed_json_36723951.json").read_text()
    fake_eutils.respond_sequence("/esummary.fcgi", [(429, rate_limited, {"Retry-After": "1"}), (200, ok, {})])
    assert list(eutils_client().esummary(["36723951"])) == ["36723951"]
    first, second = fake_eutils.requests("/esummary.fcgi")
    assert second.at - first.at >= 1.0


def test_rate_limit_json_body_with_http_200_is_retried(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    rate_limited = (eutils_dir / "biomcp/esummary_error_429_rate_limit_exceeded.json").read_text()
    ok = (eutils_dir / "yeliztli/esummary_pubmed_json_36723951.json").read_text()
    fake_eutils.respond_sequence("/esummary.fcgi", [(200, rate_limited, {}), (200, ok, {})])
    assert list(eutils_client().esummary(["36723951"])) == ["36723951"]
    assert len(fake_eutils.requests("/esummary.fcgi")) == 2


def test_5xx_is_retried_then_succeeds(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    ok = (eutils_dir / "biomcp/esearch_pubmed_json_mlh1_g67e_1hit.json").read_text()
    fake_eutils.respond_sequence("/esearch.fcgi", [(500, "oops", {}), (502, "bad gateway", {}), (200, ok, {})])
    assert eutils_client().esearch("MLH1").pmids == ["18033691"]
    assert len(fake_eutils.requests("/esearch.fcgi")) == 3


def test_retries_exhausted_raise_unavailable_with_last_error(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "Service Unavailable", status=503, content_type="text/plain")
    with pytest.raises(EutilsUnavailable) as excinfo:
        eutils_client().esearch("cancer")
    assert str(excinfo.value) == (
        "NCBI E-utilities esearch.fcgi failed after 4 attempts; last error: HTTP 503: Service Unavailable"
    )
    assert len(fake_eutils.requests("/esearch.fcgi")) == 4


def test_timeouts_are_retried(fake_eutils: FakeEutils, settings: object, eutils_dir: Path) -> None:
    settings.NCBI_TIMEOUT_SECONDS = 0.2
    settings.NCBI_MAX_RETRIES = 1
    # The fake server answers one request at a time: back off until the slow answer is over.
    settings.NCBI_BACKOFF_INITIAL_SECONDS = 0.5
    settings.NCBI_BACKOFF_MAX_SECONDS = 0.5
    ok = (eutils_dir / "biomcp/esearch_pubmed_json_mlh1_g67e_1hit.json").read_text()
    calls = []

    def slow_then_fast(request: Request) -> Response:
        fake_eutils.record(request)
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.3)
        return Response(ok, content_type="application/json")

    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(slow_then_fast)
    assert eutils_client().esearch("MLH1").pmids == ["18033691"]
    assert len(calls) == 2


def test_timeouts_exhausted_raise_unavailable(fake_eutils: FakeEutils, settings: object) -> None:
    settings.NCBI_TIMEOUT_SECONDS = 0.2
    settings.NCBI_MAX_RETRIES = 1

    answered = []

    def slow(request: Request) -> Response:
        fake_eutils.record(request)
        time.sleep(0.5)
        answered.append(1)
        return Response("{}", content_type="application/json")

    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(slow)
    with pytest.raises(EutilsUnavailable, match=r"failed after 2 attempts; last error: timed out \(ReadTimeout\)"):
        eutils_client().esearch("cancer")
    deadline = time.monotonic() + 5
    while len(answered) < 2 and time.monotonic() < deadline:  # let the server finish the abandoned requests
        time.sleep(0.05)
    assert len(answered) == 2


def test_overlong_retry_after_fails_fast(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "slow down", status=429, headers={"Retry-After": "3600"},
                        content_type="text/plain")
    with pytest.raises(EutilsUnavailable, match="asked us to wait 3600 s"):
        eutils_client().esearch("cancer")
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1


def test_4xx_is_not_retried(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "Bad Request: unknown parameter", status=400, content_type="text/plain")
    with pytest.raises(EutilsError, match=r"^NCBI E-utilities rejected esearch\.fcgi with HTTP 400: Bad Request"):
        eutils_client().esearch("cancer")
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1


@pytest.mark.django_db
def test_connection_refused_raises_unavailable(settings: object) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings.NCBI_EUTILS_BASE_URL = f"http://127.0.0.1:{port}/"
    settings.NCBI_API_KEY = f"fake-{uuid.uuid4().hex}"
    settings.NCBI_MAX_RETRIES = 1
    settings.NCBI_BACKOFF_INITIAL_SECONDS = 0.01
    settings.REDIS_URL = ""
    with pytest.raises(EutilsUnavailable, match=r"after 2 attempts; last error: connection failed \(ConnectError"):
        eutils_client().esearch("cancer")


def test_client_uses_ten_per_second_with_a_key(settings: object) -> None:
    settings.REDIS_URL = ""
    settings.NCBI_API_KEY = ""
    assert eutils_client().limiter.limit == 3
    settings.NCBI_API_KEY = "fake-key-for-limit"
    assert eutils_client().limiter.limit == 10


def test_under_a_time_limit_a_slow_response_is_cut_off_at_the_time_left(fake_eutils: FakeEutils) -> None:
    from config.http_retries import time_limit

    def slow(request: Request) -> Response:
        fake_eutils.record(request)
        time.sleep(2.0)
        return Response(esearch_json(pmids=[]), content_type="application/json")

    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(slow)
    client = eutils_client()  # 20 s per request by default, retries off in tests
    started = time.monotonic()
    with time_limit(0.3), pytest.raises(EutilsUnavailable, match="timed out"):
        client.esearch("slow")
    assert time.monotonic() - started < 1.5  # the server takes 2 s to answer
