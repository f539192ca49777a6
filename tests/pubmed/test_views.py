"""The abstract view against the fake NCBI."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.factories import UserFactory
from tests.pubmed.conftest import FakeEutils

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(client: Client) -> Client:
    """Return the test client signed in: the abstract page may call PubMed, so it needs an account."""
    client.force_login(UserFactory(username="reader"))
    return client

RESULTS = ["31978945", "22663011", "33515491", "28495875", "32887691"]


def _pmids_in_table(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'href="https://pubmed\.ncbi\.nlm\.nih\.gov/(\d+)/"', body)


def test_abstract_view_shows_labelled_sections_and_links(client: Client, fake_eutils: FakeEutils) -> None:
    fake_eutils.serve()
    response = client.get("/tablizer/abstracts/22663011/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<strong>BACKGROUND:</strong>" in html
    assert 'href="https://doi.org/10.1056/NEJMoa1203421"' in html
    assert "Antineoplastic Agents*" in html
    assert client.get("/tablizer/abstracts/40999999/").status_code == 404
    assert client.get("/tablizer/abstracts/not-a-pmid/").status_code == 404


def test_abstract_view_when_pubmed_is_unreachable_says_so_plainly(client: Client, settings) -> None:
    settings.NCBI_EUTILS_BASE_URL = "http://127.0.0.1:9/entrez/eutils/"  # nothing listens there
    settings.NCBI_MAX_RETRIES = 0
    response = client.get("/tablizer/abstracts/22663011/")
    assert response.status_code == 404
    html = response.content.decode()
    assert (
        "PubMed could not be reached, so PMID 22663011 (not in the local store) cannot be shown; try again." in html
    )
    assert "Errno" not in html and "Connection refused" not in html and "E-utilities" not in html
