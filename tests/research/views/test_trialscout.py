"""The TrialScout page: the search form, results, load more, and errors as messages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.staticfiles import finders
from lxml import html
from pytest_httpserver import HTTPServer
from werkzeug import Response

from trials.clients import SEARCH_FIELDS

pytestmark = pytest.mark.django_db

JSON = "application/json"
PHELAN_TOKEN = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw"
PHELAN_TOKEN_2 = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4bmjeauvk_IQ"


def page(response) -> html.HtmlElement:
    return html.fromstring(response.content.decode())


def result_ids(doc: html.HtmlElement) -> list[str]:
    return [link.text_content() for link in doc.cssselect("#trial-results tbody tr td:first-child a")]


def load_more_href(doc: html.HtmlElement) -> str | None:
    links = doc.cssselect("a[data-load-more]")
    return links[0].get("href") if links else None


def test_empty_page_shows_the_form_and_asks_nothing(client, ctgov: HTTPServer) -> None:
    response = client.get("/trialscout/")

    assert response.status_code == 200
    doc = page(response)
    assert [box.get("value") for box in doc.cssselect("input[name=phase]")] == [
        "EARLY_PHASE1",
        "PHASE1",
        "PHASE2",
        "PHASE3",
        "PHASE4",
        "NA",
    ]
    assert [box.get("value") for box in doc.cssselect("input[name=status]")] == [
        "RECRUITING",
        "ACTIVE_NOT_RECRUITING",
        "COMPLETED",
        "NOT_YET_RECRUITING",
        "TERMINATED",
        "WITHDRAWN",
        "SUSPENDED",
    ]
    assert [field.get("name") for field in doc.cssselect("form[role=search] input[type=search]")] == [
        "condition",
        "intervention",
        "sponsor",
        "q",
    ]
    assert doc.cssselect("form[role=search]")[0].get("method") == "get"
    assert doc.cssselect("#trial-results") == []
    assert ctgov.log == []


def test_search_shows_results_total_and_a_load_more_link(
    client, ctgov: HTTPServer, recording: Callable[[str], bytes], settings
) -> None:
    settings.CTGOV_PAGE_SIZE = 5
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_phelan_limit5_20260811.json"), content_type=JSON
    )

    response = client.get("/trialscout/", {"condition": "Phelan-McDermid Syndrome"})

    assert response.status_code == 200
    doc = page(response)
    assert doc.cssselect("#results-heading")[0].text_content().strip() == "21 trials found"
    assert result_ids(doc) == ["NCT02710084", "NCT05105685", "NCT01525901", "NCT03493607", "NCT07119606"]
    first_row = [cell.text_content().strip() for cell in doc.cssselect("#trial-results tbody tr")[0]]
    assert first_row == [
        "NCT02710084",
        "Piloting Treatment With Intranasal Oxytocin in Phelan-McDermid Syndrome",
        "Phase 2",
        "Completed",
        "Alexander Kolevzon",
        "18",
        "Phelan-McDermid Syndrome",
    ]
    assert doc.cssselect("#trial-results tbody tr")[0].cssselect("a")[0].get("href") == "/trialscout/NCT02710084/"
    assert parse_qs(urlsplit(load_more_href(doc)).query) == {
        "condition": ["Phelan-McDermid Syndrome"],
        "page_token": [PHELAN_TOKEN],
    }
    assert doc.cssselect("input[name=condition]")[0].get("value") == "Phelan-McDermid Syndrome"
    assert [request.args.to_dict() for request, _ in ctgov.log] == [
        {
            "format": "json",
            "pageSize": "5",
            "query.cond": "Phelan-McDermid Syndrome",
            "fields": ",".join(SEARCH_FIELDS),
            "countTotal": "true",
        }
    ]


def test_every_filter_reaches_ctgov_and_stays_selected_on_reload(
    client, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_melanoma_recruiting_limit3_20260811.json"), content_type=JSON
    )
    url = (
        "/trialscout/?condition=melanoma&intervention=pembrolizumab&sponsor=Merck&q=PD-1"
        "&phase=PHASE3&phase=PHASE2&status=RECRUITING&status=NOT_YET_RECRUITING&sort=start_date"
    )

    response = client.get(url)

    assert response.status_code == 200
    args = ctgov.log[0][0].args.to_dict()
    assert args == {
        "format": "json",
        "pageSize": "20",
        "query.cond": "melanoma",
        "query.intr": "pembrolizumab",
        "query.lead": "Merck",
        "query.term": "PD-1",
        "filter.overallStatus": "RECRUITING,NOT_YET_RECRUITING",
        "filter.advanced": "AREA[Phase](PHASE2 OR PHASE3)",
        "sort": "StartDate:desc",
        "fields": ",".join(SEARCH_FIELDS),
        "countTotal": "true",
    }
    doc = page(response)
    assert [box.get("value") for box in doc.cssselect("input[name=phase][checked]")] == ["PHASE2", "PHASE3"]
    assert [box.get("value") for box in doc.cssselect("input[name=status][checked]")] == [
        "RECRUITING",
        "NOT_YET_RECRUITING",
    ]
    assert doc.cssselect("select[name=sort] option[selected]")[0].get("value") == "start_date"
    assert doc.cssselect("input[name=sponsor]")[0].get("value") == "Merck"


def test_load_more_pages_to_the_end_of_the_results(
    client, ctgov: HTTPServer, recording: Callable[[str], bytes], settings
) -> None:
    """Page 1 → page 2 (the recorded pair), then a last page without nextPageToken."""
    settings.CTGOV_PAGE_SIZE = 5
    pages = {
        None: recording("biomcp/search_phelan_limit5_20260811.json"),
        PHELAN_TOKEN: recording("biomcp/search_phelan_next_20260811.json"),
        # No page 3 of this search was recorded; the recorded final page of the same query stands in.
        PHELAN_TOKEN_2: recording("biomcp/search_phelan_limit50_20260811.json"),
    }
    ctgov.expect_request("/api/v2/studies").respond_with_handler(
        lambda request: Response(pages[request.args.get("pageToken")], content_type=JSON)
    )

    first = page(client.get("/trialscout/", {"condition": "Phelan-McDermid Syndrome"}))
    second_response = client.get("/trialscout/" + load_more_href(first))
    second = page(second_response)
    third = page(client.get("/trialscout/" + load_more_href(second)))

    assert second_response.status_code == 200
    assert result_ids(second) == ["NCT05187377", "NCT03836300", "NCT07014020", "NCT05025241", "NCT07281079"]
    assert second.cssselect("#results-heading")[0].text_content().strip() == "More trials"
    assert second.xpath("//a[text()='Back to the first page of this search']/@href") == [
        "?condition=Phelan-McDermid+Syndrome"
    ]
    assert parse_qs(urlsplit(load_more_href(second)).query)["page_token"] == [PHELAN_TOKEN_2]
    assert load_more_href(third) is None
    assert "End of results." in third.text_content()
    tokens = [request.args.get("pageToken") for request, _ in ctgov.log]
    assert tokens == [None, PHELAN_TOKEN, PHELAN_TOKEN_2]
    conditions = {request.args.get("query.cond") for request, _ in ctgov.log}
    assert conditions == {"Phelan-McDermid Syndrome"}, "every page repeats the first page's criteria"


def test_ctgov_failure_is_a_message_on_the_page_not_an_error_page(client, ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data("Service Unavailable", status=503)

    response = client.get("/trialscout/", {"condition": "melanoma"})

    assert response.status_code == 200
    doc = page(response)
    assert doc.cssselect("#trial-search-error")[0].text_content() == (
        "ClinicalTrials.gov is not answering right now; try again in a few minutes."
    )
    assert doc.cssselect("#trial-search-error")[0].get("role") == "alert"
    assert doc.cssselect("input[name=condition]")[0].get("value") == "melanoma"
    assert len(ctgov.log) == 3


def test_unreachable_ctgov_is_a_plain_message_without_the_socket_error(client, settings) -> None:
    settings.CTGOV_BASE_URL = "http://127.0.0.1:9/api/v2/"  # nothing listens there
    settings.CTGOV_MAX_RETRIES = 0

    response = client.get("/trialscout/", {"condition": "melanoma"})

    assert response.status_code == 200
    html = response.content.decode()
    assert page(response).cssselect("#trial-search-error")[0].text_content() == (
        "ClinicalTrials.gov is not answering right now; try again in a few minutes."
    )
    assert "ConnectError" not in html and "Errno" not in html


def test_rejected_search_shows_ctgov_reason(client, ctgov: HTTPServer) -> None:
    # No real ClinicalTrials.gov 400 body was captured; the OpenAPI document says they are text/plain.
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        "Invalid query.cond: unbalanced parentheses", status=400, content_type="text/plain"
    )

    response = client.get("/trialscout/", {"condition": "(melanoma"})

    assert response.status_code == 200
    assert page(response).cssselect("#trial-search-error")[0].text_content() == (
        "ClinicalTrials.gov rejected the request for the study search: Invalid query.cond: unbalanced parentheses"
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            {"condition": "", "sponsor": ""},
            "Fill in a condition, intervention, lead sponsor or other terms, or pick a phase or status.",
        ),
        ({"condition": "asthma", "phase": "PHASE9"}, "PHASE9 is not a phase; pick from the list."),
        (
            {"condition": "asthma", "status": "UNKNOWN"},
            "UNKNOWN is not a status TrialScout searches by; pick from the list.",
        ),
        (
            {"condition": "asthma", "page_token": "<script>"},
            "page_token must be the next_page_token of a previous search, unchanged.",
        ),
        ({"condition": "x" * 301}, "Ensure this value has at most 300 characters (it has 301)."),
    ],
)
def test_invalid_search_shows_why_and_asks_nothing(client, ctgov: HTTPServer, query: dict, message: str) -> None:
    response = client.get("/trialscout/", query)

    assert response.status_code == 200
    assert message in page(response).text_content()
    assert page(response).cssselect("#trial-results") == []
    assert ctgov.log == []


def test_comma_separated_phases_in_a_shared_url_are_understood(
    client, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_keytruda_limit3_20260811.json"), content_type=JSON
    )

    response = client.get("/trialscout/", {"intervention": "Keytruda", "phase": "phase1,PHASE2"})

    assert response.status_code == 200
    assert ctgov.log[0][0].args["filter.advanced"] == "AREA[Phase](PHASE1 OR PHASE2)"
    assert result_ids(page(response)) == ["NCT05431270", "NCT03590054", "NCT04795661"]


def test_htmx_is_a_vendored_static_file_the_page_includes(client) -> None:
    response = client.get("/trialscout/")

    assert '<script src="/static/vendor/htmx/htmx.min.js" defer></script>' in response.content.decode()
    assert finders.find("vendor/htmx/htmx.min.js") is not None
    assert "Zero-Clause BSD" in Path(finders.find("vendor/htmx/LICENSE")).read_text()
    served = client.get("/static/vendor/htmx/htmx.min.js")
    assert served.status_code == 200
    body = b"".join(served.streaming_content) if served.streaming else served.content
    assert body == Path(finders.find("vendor/htmx/htmx.min.js")).read_bytes()


def test_load_more_for_htmx_answers_with_the_next_rows_and_extends_the_page_state(
    client, ctgov: HTTPServer, recording: Callable[[str], bytes], settings, django_user_model
) -> None:
    settings.CTGOV_PAGE_SIZE = 5
    pages = {
        None: recording("biomcp/search_phelan_limit5_20260811.json"),
        PHELAN_TOKEN: recording("biomcp/search_phelan_next_20260811.json"),
    }
    ctgov.expect_request("/api/v2/studies").respond_with_handler(
        lambda request: Response(pages[request.args.get("pageToken")], content_type=JSON)
    )
    client.force_login(django_user_model.objects.create_user(username="dr-more"))
    first = page(client.get("/trialscout/", {"condition": "Phelan-McDermid Syndrome"}))
    state = first.cssselect("form[data-tray-form] input[data-page-state]")[0].get("value")
    link = first.cssselect("a[data-load-more]")[0]
    assert link.get("hx-get") == "/trialscout/" + link.get("href")

    response = client.get(link.get("hx-get") + "&" + urlencode({"state": state}), HTTP_HX_REQUEST="true")

    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    more = html.fragment_fromstring(body, create_parent="div")
    rows = more.cssselect("tr[data-item]")
    assert [row.get("data-item") for row in rows] == [
        "NCT05187377", "NCT03836300", "NCT07014020", "NCT05025241", "NCT07281079"
    ]
    assert rows[0].cssselect("a")[0].get("autofocus") is not None
    assert all(row.cssselect("a")[0].get("autofocus") is None for row in rows[1:])
    next_link = more.cssselect("#trial-load-more[hx-swap-oob] a[data-load-more]")[0]
    assert parse_qs(urlsplit(next_link.get("href")).query)["page_token"] == [PHELAN_TOKEN_2]
    assert "state" not in parse_qs(urlsplit(next_link.get("href")).query)
    assert more.cssselect("#trial-results-status")[0].text_content() == "5 more trials loaded, 10 shown."
    new_state = more.cssselect("input[data-page-state]")[0]
    assert new_state.get("hx-swap-oob") == "outerHTML:input[data-page-state]"
    assert new_state.get("value") == f"{state}&more={PHELAN_TOKEN}"
    assert more.cssselect("section#ai-columns")[0].get("hx-swap-oob") == "true"


def test_load_more_for_htmx_reloads_the_whole_page_when_ctgov_fails(client, ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies").respond_with_data("upstream down", status=503)

    response = client.get(
        "/trialscout/", {"condition": "melanoma", "page_token": PHELAN_TOKEN, "state": "condition=melanoma"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 204
    assert response["HX-Redirect"] == f"/trialscout/?condition=melanoma&page_token={PHELAN_TOKEN}"
