"""Retracted badges and levels of evidence in the Tablizer (page, tray rows, API) and on the abstract page."""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest
from django.urls import reverse

from research.pages import tablizer

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "efetch_retractions.xml"
PMIDS = ["99000004", "99000001", "22663011", "99000005"]

pytestmark = pytest.mark.django_db


@pytest.fixture
def colchicine_rows(abstracts, esearch_serving):
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    abstracts_upsert(records=parse_pubmed_xml(FIXTURE.read_bytes()), embed=False)
    esearch_serving(PMIDS)
    return PMIDS


@pytest.fixture
def reader(client, user):
    """The test client signed in: the Tablizer and the abstract page call PubMed, so they need an account."""
    client.force_login(user)
    return client


def _rows(response) -> list[tuple[str, str, bool]]:
    """Return (PMID, level code, has a Retracted badge) for every Tablizer row, in order."""
    tree = lxml.html.fromstring(response.content.decode())
    return [
        (
            row.get("data-item"),
            row.cssselect(".badge.level")[0].get("data-level"),
            bool(row.cssselect(".badge.retracted")),
        )
        for row in tree.cssselect("table.tablizer-table tbody tr")
    ]


def test_rows_show_the_retracted_badge_and_a_level_badge(reader, colchicine_rows):
    response = reader.get(reverse("research:tablizer"), {"q": "colchicine"})
    assert _rows(response) == [
        ("99000004", "cohort", False),
        ("99000001", "rct", True),
        ("22663011", "rct", False),
        ("99000005", "systematic_review", False),
    ]
    tree = lxml.html.fromstring(response.content.decode())
    (retracted,) = tree.cssselect('tr[data-item="99000001"] .badge.retracted')
    assert retracted.text_content() == "Retracted"
    assert tree.cssselect('tr[data-item="99000004"] .badge.concern')[0].text_content() == "Expression of concern"


def test_rows_filter_and_sort_by_level(reader, colchicine_rows):
    url = reverse("research:tablizer")
    assert [pmid for pmid, _, _ in _rows(reader.get(url, {"q": "colchicine", "level": "rct"}))] == [
        "99000001", "22663011"
    ]
    filtered = reader.get(url, {"q": "colchicine", "level": ["rct", "cohort"]})
    assert "(1 loaded article of other levels hidden by the level filter)" in " ".join(
        filtered.content.decode().split()
    )
    by_level = _rows(reader.get(url, {"q": "colchicine", "sort": "level"}))
    assert [level for _, level, _ in by_level] == ["systematic_review", "rct", "rct", "cohort"]
    weakest_first = _rows(reader.get(url, {"q": "colchicine", "sort": "level", "dir": "desc"}))
    assert [level for _, level, _ in weakest_first] == ["cohort", "rct", "rct", "systematic_review"]


def test_any_level_the_select_default_searches_every_level(reader, user, colchicine_rows):
    response = reader.get(reverse("research:tablizer"), {"q": "colchicine", "level": ""})
    assert response.status_code == 200
    assert [pmid for pmid, _, _ in _rows(response)] == ["99000004", "99000001", "22663011", "99000005"]
    assert "Select a valid choice" not in response.content.decode()
    assert [item.item_id for item in tablizer.build_context(state="q=colchicine&level=", user=user).items] == [
        "99000004", "99000001", "22663011", "99000005"
    ]


def test_unknown_level_is_reported_on_the_page(reader, colchicine_rows):
    response = reader.get(reverse("research:tablizer"), {"q": "colchicine", "level": "anecdote"})
    assert "Level of evidence: Select a valid choice. anecdote is not one of the available choices." in (
        response.content.decode()
    )


def test_tray_rows_carry_the_level_and_never_cite_a_retracted_row(user, colchicine_rows):
    context = tablizer.build_context(state="q=colchicine&level=rct", user=user)
    assert [item.item_id for item in context.items] == ["99000001", "22663011"]
    retracted = context.items[0]
    assert retracted.line.startswith("PMID 99000001 | RETRACTED - not evidence | Colchicine after")
    assert retracted.line.endswith("| level: RCT")
    assert (retracted.source.retracted, retracted.source.evidence_level) == (True, "rct")
    assert "Level of evidence filter: rct" in context.header


def test_tablizer_api_filters_sorts_and_flags(client, user, colchicine_rows):
    client.force_login(user)
    url = reverse("pubmed-api-tablizer")
    body = client.get(url, {"q": "colchicine", "sort": "level"}).json()
    assert (body["count"], body["loaded"]) == (4, 4)
    assert [(r["pmid"], r["evidence_level"], r["retracted"]) for r in body["results"]] == [
        ("99000005", "systematic_review", False),
        ("99000001", "rct", True),
        ("22663011", "rct", False),
        ("99000004", "cohort", False),
    ]
    assert body["results"][1]["corrections"][0]["type"] == "RetractionIn"
    assert body["results"][3]["expression_of_concern"] is True
    only = client.get(url, {"q": "colchicine", "level": "systematic_review"}).json()
    assert [r["pmid"] for r in only["results"]] == ["99000005"]
    assert only["results"][0]["evidence_level_label"] == "Systematic review / meta-analysis"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "colchicine", "level": "anecdote"}, "level.0: Unknown level 'anecdote'; use one of guideline, "
         "systematic_review, rct, cohort, case_series, narrative_review, other."),
        ({"q": "colchicine", "sort": "hype"}, "sort: Unknown sort 'hype'; use one of relevance, pmid, title, "
         "author, journal, year, type, level."),
        ({"q": "  "}, "q: This field may not be blank."),
    ],
)
def test_tablizer_api_rejects_bad_input_with_a_json_error(client, user, params, message):
    client.force_login(user)
    response = client.get(reverse("pubmed-api-tablizer"), params)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message


def test_tablizer_api_needs_a_login(client):
    response = client.get(reverse("pubmed-api-tablizer"), {"q": "colchicine"})
    assert response.status_code in (401, 403)
    assert set(response.json()["error"]) >= {"code", "message"}


def test_abstract_page_shows_the_retraction_and_the_level(reader, colchicine_rows):
    page = reader.get(reverse("pubmed:abstract-detail", args=["99000001"])).content.decode()
    tree = lxml.html.fromstring(page)
    (banner,) = tree.cssselect(".retraction-banner")
    assert banner.cssselect(".badge.retracted")[0].text_content() == "Retracted"
    assert banner.cssselect("a")[0].get("href") == reverse("pubmed:abstract-detail", args=["99000003"])
    assert "Data could not be verified." in banner.text_content()
    assert tree.cssselect(".badge.level")[0].text_content() == "RCT"
    inferred = lxml.html.fromstring(reader.get(reverse("pubmed:abstract-detail", args=["22663011"])).content)
    assert inferred.cssselect(".badge.level")[0].get("data-level") == "rct"


def test_tray_answer_about_the_rows_never_rests_on_the_retracted_row():
    from chat.answer_settings import answer_settings
    from pubmed.models import Abstract
    from research.context import PageContext
    from research.extractive import answer_from_rows
    from research.registries import page_get

    rows = [
        Abstract(pmid="201", title="Colchicine after myocardial infarction: a randomised trial", year=2021,
                 abstract="Colchicine reduced cardiovascular events after myocardial infarction by 77 percent.",
                 is_retracted=True, evidence_level="rct"),
        Abstract(pmid="202", title="Colchicine after myocardial infarction: a meta-analysis", year=2024,
                 abstract="Colchicine reduced cardiovascular events after myocardial infarction by 25 percent.",
                 evidence_level="systematic_review"),
    ]
    items = [tablizer.abstract_item(row) for row in rows]
    context = PageContext(page=page_get("tablizer"), state="q=colchicine", items=items)
    answer = answer_from_rows(
        question="Does colchicine reduce cardiovascular events after myocardial infarction?",
        context=context,
        settings=answer_settings(),
    )
    assert answer.text == (
        "**Bottom line:** Colchicine reduced cardiovascular events after myocardial infarction by 25 percent "
        "[citation:pmid:202:abstract]."
    )
