"""The Tablizer page against the fake NCBI: search, sort, load more, errors as messages."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from pubmed.models import Abstract, AbstractChunk, EsearchCacheEntry
from tests.pubmed.conftest import FakeEutils

pytestmark = pytest.mark.django_db

PUBMED_UNREACHABLE_MESSAGE = "PubMed could not be reached; results shown are from the local store; try again."
PUBMED_REFUSED_MESSAGE = (
    "PubMed could not run this search; check the query (field tags such as [tiab] or [mesh], quotes and "
    "brackets) and try again."
)
RESULTS = ["31978945", "22663011", "33515491", "28495875", "32887691"]


def _pmids_in_table(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'href="https://pubmed\.ncbi\.nlm\.nih\.gov/(\d+)/"', body)


def test_empty_page_shows_the_search_form(client: Client) -> None:
    response = client.get("/tablizer/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<form method="get" action="/tablizer/"' in html
    assert 'name="q"' in html and 'name="year_from"' in html and 'name="year_to"' in html
    assert "<table" not in html


def test_search_renders_a_table_in_pubmed_order_and_caches(client: Client, fake_eutils: FakeEutils,
                                                           django_capture_on_commit_callbacks: object) -> None:
    fake_eutils.esearch_ids = {"covid OR melanoma": RESULTS}
    fake_eutils.serve()
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        response = client.get("/tablizer/", {"q": "covid OR melanoma"})
    assert response.status_code == 200
    html = response.content.decode()
    assert _pmids_in_table(html) == RESULTS
    assert "5 results in PubMed; showing 5." in html
    assert 'href="/tablizer/abstracts/22663011/"' in html
    assert "Flaherty KT" in html and "N Engl J Med" in html
    assert Abstract.objects.count() == 5
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()  # embedded after commit
    assert EsearchCacheEntry.objects.count() == 1
    client.get("/tablizer/", {"q": "covid OR melanoma", "sort": "year", "dir": "desc"})
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1  # served from the database cache
    assert len(fake_eutils.requests("/efetch.fcgi")) == 1  # abstracts already stored


def test_sorting_by_year_and_title(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"q": RESULTS}
    fake_eutils.serve()
    by_year = client.get("/tablizer/", {"q": "q", "sort": "year", "dir": "desc"}).content.decode()
    years = {a.pmid: a.year for a in Abstract.objects.all()}
    ordered = _pmids_in_table(by_year)
    assert [years[p] for p in ordered] == sorted(years.values(), reverse=True)
    assert 'aria-sort="descending"' in by_year
    by_title = client.get("/tablizer/", {"q": "q", "sort": "title", "dir": "asc"}).content.decode()
    titles = {a.pmid: a.title.lower() for a in Abstract.objects.all()}
    assert [titles[p] for p in _pmids_in_table(by_title)] == sorted(titles.values())


def test_load_more_and_date_range(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"q": RESULTS}
    fake_eutils.serve()
    first = client.get("/tablizer/", {"q": "q", "n": "2", "year_from": "2010", "year_to": "2025"}).content.decode()
    assert _pmids_in_table(first) == RESULTS[:2]
    assert '<a class="button" href="?q=q&amp;n=22&amp;year_from=2010&amp;year_to=2025">Load more</a>' in first
    (seen,) = fake_eutils.requests("/esearch.fcgi")
    assert (seen.params["mindate"], seen.params["maxdate"], seen.params["datetype"]) == (
        "2010/01/01", "2025/12/31", "pdat")
    more = client.get("/tablizer/", {"q": "q", "n": "22", "year_from": "2010", "year_to": "2025"}).content.decode()
    assert _pmids_in_table(more) == RESULTS
    assert "Load more" not in more


def test_ncbi_errors_become_messages_not_500s(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "Service Unavailable", status=503, content_type="text/plain")
    response = client.get("/tablizer/", {"q": "covid"})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<li class="message warning">{PUBMED_UNREACHABLE_MESSAGE}</li>' in html
    assert "0 stored articles match (local store, not PubMed); showing 0." in html
    assert "E-utilities" not in html and "503" not in html


def test_unreachable_pubmed_shows_stored_articles_and_a_plain_message(
    client: Client, abstracts: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    # The autouse fixture points E-utilities at a closed port on 127.0.0.1: the connection is refused.
    response = client.get("/tablizer/", {"q": "melanoma"})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<li class="message warning">{PUBMED_UNREACHABLE_MESSAGE}</li>' in html
    assert "Errno" not in html and "Connection refused" not in html and "ConnectError" not in html
    assert _pmids_in_table(html) == ["22663011"]  # the stored melanoma trial, found by full text
    assert "1 stored article matches (local store, not PubMed); showing 1." in html
    assert "Load more" not in html


def test_a_query_pubmed_refuses_is_a_plain_message(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "Invalid query syntax", status=400, content_type="text/plain")
    html = client.get("/tablizer/", {"q": "melanoma[badtag"}).content.decode()
    assert f'<li class="message error">{PUBMED_REFUSED_MESSAGE}</li>' in html
    assert "HTTP 400" not in html and "Invalid query syntax" not in html


def test_bad_form_input_is_a_message(client: Client) -> None:
    response = client.get("/tablizer/", {"q": "covid", "year_from": "2020", "year_to": "2001"})
    assert response.status_code == 400
    assert "The start year 2020 is after the end year 2001." in response.content.decode()


def test_load_more_for_htmx_answers_with_the_longer_results_only(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"q": RESULTS}
    fake_eutils.serve()
    first = client.get("/tablizer/", {"q": "q", "n": "2"}).content.decode()
    assert '<p class="load-more" hx-boost="true" hx-target="#tablizer-results" hx-swap="outerHTML"' in first

    response = client.get("/tablizer/", {"q": "q", "n": "22"}, HTTP_HX_REQUEST="true")

    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in body and body.lstrip().startswith('<div id="tablizer-results">')
    assert _pmids_in_table(body) == RESULTS
    assert "5 results in PubMed; showing 5." in body
    focused = re.findall(r'<tr data-item="(\d+)">\s*<td><a [^>]*autofocus', body)
    assert focused == [RESULTS[2]]  # the first row the click added
    assert "Load more" not in body


def test_load_more_for_htmx_reloads_the_whole_page_when_pubmed_fails(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "Service Unavailable", status=503, content_type="text/plain")
    fake_eutils.serve()

    response = client.get("/tablizer/", {"q": "q", "n": "22"}, HTTP_HX_REQUEST="true")

    assert response.status_code == 204
    assert response["HX-Redirect"] == "/tablizer/?q=q&n=22"
    follow = client.get(response["HX-Redirect"]).content.decode()
    assert PUBMED_UNREACHABLE_MESSAGE in follow
