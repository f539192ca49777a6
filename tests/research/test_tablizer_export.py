"""Exporting the Tablizer's rows: ticked rows or every row shown, from the page and from the API."""

from __future__ import annotations

import json

import lxml.html
import pytest
import rispy
from rest_framework.test import APIClient

from pubmed.models import Abstract

SHOWN = ["35123456", "22663011", "28775130"]

USE = "use one of ris, bibtex, nbib, csljson (e.g. ?format=ris)."


@pytest.fixture
def shown_page(client, user, abstracts, esearch_serving):
    """The Tablizer page showing three stored abstracts for a search (fake E-utilities)."""
    esearch_serving(SHOWN)
    client.force_login(user)
    return lxml.html.fromstring(client.get("/tablizer/?q=pten").content.decode())


def submit(client, form: lxml.html.FormElement, *, ticked: list[str], fmt: str):
    """Submit the export form as a browser would: its hidden fields, the chosen format, the ticked boxes."""
    data: dict[str, object] = {field.name: field.value for field in form.inputs if field.get("type") == "hidden"}
    data["format"] = fmt
    data["pmid"] = ticked
    return client.get(form.get("action"), data)


def test_every_row_has_a_box_tied_to_the_export_form(shown_page) -> None:
    [form] = shown_page.cssselect("form#tablizer-export")
    assert form.get("action") == "/tablizer/export/"
    boxes = shown_page.cssselect("table.tablizer-table input[type=checkbox][name=pmid]")
    assert [box.get("value") for box in boxes] == SHOWN
    assert {box.get("form") for box in boxes} == {"tablizer-export"}
    assert form.cssselect("input[name=shown]")[0].get("value") == ",".join(SHOWN)


def test_ticked_rows_are_exported(client, shown_page) -> None:
    form = shown_page.cssselect("form#tablizer-export")[0]
    response = submit(client, form, ticked=["28775130", "35123456"], fmt="ris")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="medcite-tablizer.ris"'
    entries = rispy.loads(response.content.decode())
    assert [entry["accession_number"] for entry in entries] == ["28775130", "35123456"]
    stored = Abstract.objects.get(pmid="28775130")
    assert entries[0]["title"] == stored.title
    assert len(entries[0]["authors"]) == len(stored.authors)
    assert entries[0].get("doi", "") == stored.doi


def test_with_nothing_ticked_every_shown_row_is_exported(client, shown_page) -> None:
    form = shown_page.cssselect("form#tablizer-export")[0]
    items = json.loads(submit(client, form, ticked=[], fmt="csljson").content)
    assert [item["PMID"] for item in items] == SHOWN


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("format=ris", "Tick the rows to export, or run a search first."),
        ("format=ris&pmid=12x", "Not a PMID: 12x."),
        ("format=word&pmid=35123456", f"Unknown export format 'word'; {USE}"),
    ],
)
def test_a_bad_page_export_says_what_to_change(client, user, query: str, message: str) -> None:
    client.force_login(user)
    response = client.get(f"/tablizer/export/?{query}")
    assert (response.status_code, response.content.decode()) == (400, message)


def test_the_api_exports_a_selection_of_stored_abstracts(abstracts) -> None:
    response = APIClient().get("/api/v1/abstracts/export?format=nbib&pmids=22663011,99999999,27797938")
    assert response.status_code == 200
    assert response["X-Missing-PMIDs"] == "99999999"
    pmids = [line[6:] for line in response.content.decode().splitlines() if line.startswith("PMID- ")]
    assert pmids == ["22663011", "27797938"]


def test_the_api_exports_a_pubmed_search_for_signed_in_users(user, abstracts, esearch_serving) -> None:
    esearch_serving(SHOWN)
    client = APIClient()
    assert client.get("/api/v1/abstracts/export?format=ris&q=pten").status_code == 401
    client.force_authenticate(user)
    entries = rispy.loads(client.get("/api/v1/abstracts/export?format=ris&q=pten").content.decode())
    assert [entry["accession_number"] for entry in entries] == SHOWN


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("format=tex&pmids=1", 400, f"format: Unknown export format 'tex'; {USE}"),
        ("pmids=1", 400, f"format: No export format given; {USE}"),
        ("format=ris&pmids=12,abc", 400, "pmids: Not a PMID: abc; PMIDs are digits, e.g. 35657320."),
        ("format=ris", 400, "Give either pmids=35657320,31104089 or q=<PubMed query>, not both."),
        (
            "format=ris&pmids=99999999",
            404,
            "None of these PMIDs is stored: 99999999. Search them in the Tablizer first.",
        ),
    ],
)
def test_bad_api_exports_are_precise_json_errors(query: str, status: int, message: str) -> None:
    response = APIClient().get(f"/api/v1/abstracts/export?{query}")
    assert response.status_code == status
    assert response.json()["error"]["message"] == message
