"""The one NCBI E-utilities client in MedCite: esearch (JSON), efetch (PubMed XML), esummary (JSON).

Every request passes the rate limiter (3 requests per second without `NCBI_API_KEY`, 10 with one;
every process shares the window, through Redis or else PostgreSQL), carries `tool`/`email`/`api_key`,
and is retried with exponential backoff and jitter on 429, 5xx, connection errors and timeouts, honouring
`Retry-After`. NCBI's HTTP 200 answers that carry an `<ERROR>` element or an `"error"` field are
raised as errors, never returned as empty results.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpx
import structlog
from django.conf import settings

from config import http_retries
from evidence.identifiers import is_pmid
from pubmed.parsers import AbstractRecord, PubmedParseError, ncbi_xml_errors, parse_pubmed_xml
from pubmed.parsers import parse_xml_safely as _parse_xml
from pubmed.ratelimit import (
    RateLimitBusy,
    RateLimiter,
    RateLimiterUnavailable,
    ncbi_rate_limiter,
    redis_url_for_rate_limit,
)
from pubmed.summaries import PubmedSummary, summary_from_json

logger = structlog.get_logger(__name__)

ESEARCH_PAGE_SIZE = 500  # ids per esearch request; larger result sets are paged via the history server
ESEARCH_MAX_RESULTS = 9999  # PubMed refuses retstart beyond 9,998
EFETCH_BATCH_SIZE = 200
ESUMMARY_BATCH_SIZE = 200
ERROR_BODY_MAX_CHARS = 200  # how much of an NCBI error body is quoted back
POST_THRESHOLD = 100  # id lists longer than this go in a POST body, as NCBI asks
ESEARCH_SORTS = {"relevance", "pub_date", "Author", "JournalName", "pub+date", "first+author", "journal"}


class EutilsError(Exception):
    """NCBI E-utilities refused a request or answered with something that is not a result."""


class EutilsUnavailable(EutilsError):
    """NCBI E-utilities could not be reached or kept failing after every retry."""


class EutilsBusy(EutilsError):
    """No request was sent: the shared NCBI budget had no slot before the caller's deadline (NCBI itself is fine)."""


@dataclass(frozen=True)
class EsearchResult:
    count: int
    pmids: list[str]
    query_translation: str
    retstart: int = 0
    webenv: str = ""
    query_key: str = ""
    phrases_not_found: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _check_pmids(pmids: Sequence[str]) -> list[str]:
    """Return the PMIDs as stripped strings without duplicates, raising on anything that is not a PMID."""
    if isinstance(pmids, str):
        raise EutilsError("Pass PMIDs as a list of strings, not one string.")
    unique: list[str] = []
    seen = set()
    for value in pmids:
        pmid = str(value).strip()
        if not is_pmid(pmid):
            raise EutilsError(f"{value!r} is not a PMID: use digits only, e.g. 35657320.")
        if pmid not in seen:
            seen.add(pmid)
            unique.append(pmid)
    return unique


def _batches(items: Sequence[str], size: int) -> list[list[str]]:
    return [list(items[start:start + size]) for start in range(0, len(items), size)]


class EutilsClient:
    """A thin client over an injected `httpx.Client`; see the module docstring for the guarantees."""

    def __init__(
        self,
        *,
        base_url: str,
        tool: str,
        email: str = "",
        api_key: str = "",
        timeout: float = 20.0,
        max_retries: int = 4,
        backoff_initial: float = 0.5,
        backoff_max: float = 10.0,
        retry_after_max: float = 60.0,
        limiter: RateLimiter,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.tool = tool
        self.email = email
        self.api_key = api_key
        self.retries = http_retries.RetryPolicy(
            max_retries=max_retries,
            backoff_initial_seconds=backoff_initial,
            backoff_max_seconds=backoff_max,
            retry_after_max_seconds=retry_after_max,
            log_event="ncbi_retry",
        )
        self.limiter = limiter
        self.timeout = timeout
        self.http = http or httpx.Client(
            timeout=httpx.Timeout(timeout), headers={"User-Agent": f"{tool} (MedCite)"}
        )

    # --- transport ---------------------------------------------------------------------------

    def _common_params(self) -> dict[str, str]:
        params = {"tool": self.tool}
        if self.email:
            params["email"] = self.email
        if self.api_key:
            params["api_key"] = self.api_key
        return params

    def _send_once(self, endpoint: str, params: dict[str, Any], post: bool) -> httpx.Response:
        try:
            self.limiter.acquire()
        except RateLimitBusy as exc:
            raise EutilsBusy(f"No request was sent to NCBI E-utilities {endpoint}: {exc}") from exc
        except RateLimiterUnavailable as exc:
            raise EutilsUnavailable(f"No request was sent to NCBI E-utilities {endpoint}: {exc}") from exc
        url = self.base_url + endpoint
        # Under a caller's time limit (an answer's live search) a request gets at most the time left.
        left = http_retries.seconds_left()
        timeout = httpx.USE_CLIENT_DEFAULT if left is None or left >= self.timeout else max(left, 0.05)
        try:
            response = (
                self.http.post(url, data=params, timeout=timeout) if post
                else self.http.get(url, params=params, timeout=timeout)
            )
        except httpx.TimeoutException as exc:
            raise http_retries.TransientFailure(f"timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise http_retries.TransientFailure(f"connection failed ({type(exc).__name__}: {exc})") from exc
        status = response.status_code
        if status >= 400:
            quoted = http_retries.body_snippet(response.text, ERROR_BODY_MAX_CHARS)
            if http_retries.is_transient_status(status):
                raise http_retries.transient_status_failure(response, f"HTTP {status}: {quoted}")
            raise EutilsError(f"NCBI E-utilities rejected {endpoint} with HTTP {status}: {quoted}")
        # NCBI's rate limiter sometimes answers with this JSON body; it is a 429 in disguise.
        if response.headers.get("content-type", "").startswith("application/json") or response.text[:1] == "{":
            try:
                body = response.json()
            except ValueError:
                body = None
            if isinstance(body, dict) and "rate limit" in str(body.get("error", "")).lower():
                raise http_retries.TransientFailure(f"rate limited: {body['error']}")
        return response

    def _request(self, endpoint: str, params: dict[str, Any], *, post: bool = False) -> httpx.Response:
        """Send one E-utilities request through the limiter, retrying transient failures."""
        params = {**self._common_params(), **params}
        try:
            return self.retries.call(lambda: self._send_once(endpoint, params, post), endpoint=endpoint)
        except http_retries.RetryAfterTooLong as exc:
            raise EutilsUnavailable(
                f"NCBI E-utilities {endpoint} answered HTTP {exc.status} and asked us to wait "
                f"{exc.retry_after:.0f} s (more than NCBI_RETRY_AFTER_MAX_SECONDS="
                f"{self.retries.retry_after_max_seconds:.0f}); try again later."
            ) from exc
        except http_retries.RetriesExhausted as exc:
            raise EutilsUnavailable(
                f"NCBI E-utilities {endpoint} failed after {exc.attempts} attempts; last error: {exc.failure}"
            ) from exc

    def _json(self, endpoint: str, params: dict[str, Any], *, post: bool = False) -> dict[str, Any]:
        response = self._request(endpoint, {**params, "retmode": "json"}, post=post)
        try:
            body = json.loads(response.content)
        except ValueError:
            # Some NCBI failures come back as XML even when JSON was asked for.
            self._raise_xml_error(endpoint, response.content)
            raise EutilsError(
                f"NCBI E-utilities {endpoint} returned invalid JSON: "
                + http_retries.body_snippet(response.text, ERROR_BODY_MAX_CHARS)
            ) from None
        if not isinstance(body, dict):
            raise EutilsError(f"NCBI E-utilities {endpoint} returned JSON that is not an object.")
        if body.get("error"):
            raise EutilsError(f"NCBI E-utilities {endpoint} returned an error: {body['error']}")
        return body

    def _raise_xml_error(self, endpoint: str, content: bytes) -> None:
        try:
            root = _parse_xml(content)
        except PubmedParseError:
            return
        errors = ncbi_xml_errors(root)
        if errors:
            raise EutilsError(f"NCBI E-utilities {endpoint} returned an error: {'; '.join(errors)}")

    # --- esearch -----------------------------------------------------------------------------

    def _esearch_page(self, params: dict[str, Any]) -> dict[str, Any]:
        body = self._json("esearch.fcgi", params)
        result = body.get("esearchresult")
        if not isinstance(result, dict):
            raise EutilsError("NCBI esearch answer has no 'esearchresult' object.")
        error = result.get("ERROR") or result.get("error")
        if error:
            raise EutilsError(f"NCBI esearch rejected the query: {error}")
        return result

    def esearch(
        self,
        term: str,
        *,
        retmax: int = 20,
        retstart: int = 0,
        mindate: str | None = None,
        maxdate: str | None = None,
        sort: str | None = None,
    ) -> EsearchResult:
        """Search PubMed and return the hit count and up to `retmax` PMIDs from `retstart` on.

        More than 500 ids are collected page by page through NCBI's history server (usehistory).
        """
        term = term.strip()
        if not term:
            raise EutilsError("The PubMed query is empty; give search terms, e.g. 'metformin AND cancer'.")
        if retmax < 0 or retstart < 0:
            raise EutilsError("retmax and retstart must be 0 or more.")
        if retstart + retmax > ESEARCH_MAX_RESULTS + 1:
            raise EutilsError(
                f"PubMed returns at most {ESEARCH_MAX_RESULTS} results per query (retstart + retmax); narrow the query."
            )
        if sort is not None and sort not in ESEARCH_SORTS:
            raise EutilsError(f"Unknown sort {sort!r}; use one of {', '.join(sorted(ESEARCH_SORTS))}.")
        params: dict[str, Any] = {"db": "pubmed", "term": term, "retstart": retstart}
        if mindate or maxdate:
            params.update(datetype="pdat", mindate=mindate or "1000", maxdate=maxdate or "3000")
        if sort:
            params["sort"] = sort
        first_size = min(retmax, ESEARCH_PAGE_SIZE)
        needs_history = retmax > ESEARCH_PAGE_SIZE
        first = self._esearch_page({**params, "retmax": first_size, **({"usehistory": "y"} if needs_history else {})})
        count = int(first.get("count", 0))
        pmids = [str(pmid) for pmid in first.get("idlist", [])]
        webenv = str(first.get("webenv", ""))
        query_key = str(first.get("querykey", ""))
        wanted = min(retmax, max(count - retstart, 0))
        while needs_history and len(pmids) < wanted:
            page_params: dict[str, Any] = {
                "db": "pubmed",
                "retstart": retstart + len(pmids),
                "retmax": min(ESEARCH_PAGE_SIZE, wanted - len(pmids)),
            }
            if webenv and query_key:
                page_params.update(WebEnv=webenv, query_key=query_key)
            else:
                page_params.update({key: value for key, value in params.items() if key != "retstart"})
            page = self._esearch_page(page_params)
            page_ids = [str(pmid) for pmid in page.get("idlist", [])]
            if not page_ids:
                break
            pmids.extend(page_ids)
        errorlist = first.get("errorlist") or {}
        warninglist = first.get("warninglist") or {}
        return EsearchResult(
            count=count,
            pmids=pmids[:retmax],
            query_translation=str(first.get("querytranslation", "")),
            retstart=retstart,
            webenv=webenv,
            query_key=query_key,
            phrases_not_found=[str(p) for p in errorlist.get("phrasesnotfound", [])],
            warnings=[str(m) for m in warninglist.get("outputmessages", [])],
        )

    # --- efetch ------------------------------------------------------------------------------

    def efetch(self, pmids: Sequence[str]) -> list[AbstractRecord]:
        """Fetch full PubMed records (XML) in batches of at most 200, in NCBI's order per batch."""
        records: list[AbstractRecord] = []
        for batch in _batches(_check_pmids(pmids), EFETCH_BATCH_SIZE):
            response = self._request(
                "efetch.fcgi",
                {"db": "pubmed", "id": ",".join(batch), "retmode": "xml"},
                post=len(batch) > POST_THRESHOLD,
            )
            try:
                records.extend(parse_pubmed_xml(response.content))
            except PubmedParseError as exc:
                raise EutilsError(
                    f"NCBI efetch for {len(batch)} PMID(s) starting {batch[0]} returned unusable XML: {exc}"
                ) from exc
        return records

    # --- esummary ----------------------------------------------------------------------------

    def esummary(self, pmids: Sequence[str]) -> dict[str, PubmedSummary]:
        """Return citation summaries keyed by PMID; PMIDs NCBI reports as missing or invalid are absent."""
        summaries: dict[str, PubmedSummary] = {}
        for batch in _batches(_check_pmids(pmids), ESUMMARY_BATCH_SIZE):
            body = self._json(
                "esummary.fcgi",
                {"db": "pubmed", "id": ",".join(batch), "version": "2.0"},
                post=len(batch) > POST_THRESHOLD,
            )
            if "result" not in body:
                messages = body.get("esummaryresult") or []
                texts = [str(m) for m in messages] if isinstance(messages, list) else [str(messages)]
                if all("invalid uid" in t.lower() or "empty id list" in t.lower() for t in texts) and texts:
                    continue  # every id in the batch was unknown to NCBI
                reason = "; ".join(texts) or http_retries.body_snippet(str(body), ERROR_BODY_MAX_CHARS)
                raise EutilsError(f"NCBI esummary returned no result: {reason}")
            result = body["result"]
            for uid in result.get("uids", []):
                item = result.get(str(uid))
                if not isinstance(item, dict) or item.get("error"):
                    continue
                summaries[str(uid)] = summary_from_json(str(uid), item)
        return summaries

    def close(self) -> None:
        self.http.close()


@cache
def _cached_client(
    base_url: str,
    tool: str,
    email: str,
    api_key: str,
    timeout: float,
    max_retries: int,
    backoff_initial: float,
    backoff_max: float,
    retry_after_max: float,
    redis_url: str,
    requests_per_second: int,
    margin: float,
    pid: int,
) -> EutilsClient:
    limiter = ncbi_rate_limiter(
        redis_url=redis_url, api_key=api_key, requests_per_second=requests_per_second, margin_seconds=margin
    )
    return EutilsClient(
        base_url=base_url,
        tool=tool,
        email=email,
        api_key=api_key,
        timeout=timeout,
        max_retries=max_retries,
        backoff_initial=backoff_initial,
        backoff_max=backoff_max,
        retry_after_max=retry_after_max,
        limiter=limiter,
    )


def eutils_client() -> EutilsClient:
    """Return the E-utilities client for the current settings (one per settings and process)."""
    import os

    api_key = settings.NCBI_API_KEY
    return _cached_client(
        settings.NCBI_EUTILS_BASE_URL,
        settings.NCBI_TOOL,
        settings.NCBI_EMAIL,
        api_key,
        float(settings.NCBI_TIMEOUT_SECONDS),
        int(settings.NCBI_MAX_RETRIES),
        float(getattr(settings, "NCBI_BACKOFF_INITIAL_SECONDS", 0.5)),
        float(getattr(settings, "NCBI_BACKOFF_MAX_SECONDS", 10.0)),
        float(getattr(settings, "NCBI_RETRY_AFTER_MAX_SECONDS", 60.0)),
        redis_url_for_rate_limit(redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL),
        10 if api_key else 3,
        float(getattr(settings, "NCBI_RATE_LIMIT_MARGIN_SECONDS", 0.1)),
        os.getpid(),
    )
