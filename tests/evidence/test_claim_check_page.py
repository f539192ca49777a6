"""The citation checker page `/check/`: a form for signed-in users, results as a table of sentences."""

from __future__ import annotations

import lxml.html
import pytest
from django.test import Client
from django.urls import reverse

from pubmed.models import Abstract
from tests.evidence.checker import (
    QUOTED,
    SUPPORTED,
    TRAMETINIB,
    UNCITED,
    UNRELATED,
    stored_trametinib,  # noqa: F401  (fixture)
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client: Client) -> Client:
    client.force_login(UserFactory(username="dr-page"))
    return client


def test_the_page_asks_anonymous_visitors_to_sign_in(client: Client) -> None:
    response = client.get("/check/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/check/"


def test_the_form_is_in_the_site_navigation(signed_in: Client) -> None:
    tree = lxml.html.fromstring(signed_in.get(reverse("checker:index")).content)
    current = tree.cssselect('.site-nav a[aria-current="page"]')
    assert [(a.text_content(), a.get("href")) for a in current] == [("Check citations", "/check/")]
    assert tree.cssselect("form.claim-check-form textarea[name=text]")
    assert not tree.cssselect("table.claim-check-table")
    assert not tree.cssselect("script:not([src])"), "the CSP allows no inline scripts"


def test_posted_text_comes_back_as_one_row_per_sentence(signed_in: Client, stored_trametinib: Abstract) -> None:  # noqa: F811
    text = f"{SUPPORTED} {UNRELATED}\n<script>alert(1)</script> {UNCITED}"
    response = signed_in.post(reverse("checker:index"), {"text": text})
    assert response.status_code == 200
    tree = lxml.html.fromstring(response.content)
    rows = tree.cssselect("table.claim-check-table tbody tr")
    assert [row.cssselect(".badge")[0].get("data-status") for row in rows] == [
        "supported", "not_supported", "no_citation"
    ]
    assert [row.cssselect(".badge")[0].text_content() for row in rows] == ["Supported", "Not supported", "No citation"]
    first = rows[0]
    assert first.cssselect("td")[0].text_content() == SUPPORTED
    assert first.cssselect(".source-quote")[0].text_content() == f"PMID {TRAMETINIB}: “{QUOTED}.”"
    assert [a.get("href") for a in first.cssselect("td:nth-child(4) a")] == [
        f"https://pubmed.ncbi.nlm.nih.gov/{TRAMETINIB}/"
    ]
    assert "<script>alert(1)</script>" not in response.content.decode()
    assert tree.cssselect("textarea[name=text]")[0].text_content() == text


def test_text_that_cannot_be_checked_shows_why(signed_in: Client) -> None:
    response = signed_in.post(reverse("checker:index"), {"text": "Apixaban lowers stroke (NCT0123456)."})
    assert response.status_code == 400
    tree = lxml.html.fromstring(response.content)
    assert tree.cssselect("p.error")[0].text_content().startswith("Not well-formed identifier: NCT0123456.")
    assert not tree.cssselect("table.claim-check-table")
