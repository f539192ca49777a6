"""The trial page: facts, eligibility, outcomes, and errors as messages."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from lxml import html
from pytest_httpserver import HTTPServer

from tests.conftest import free_port
from tests.factories import UserFactory
from tests.trials.factories import TrialFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(client):
    """Return the test client signed in: the trial page may call ClinicalTrials.gov, so it needs an account."""
    client.force_login(UserFactory(username="reader"))
    return client

JSON = "application/json"


def page(response) -> html.HtmlElement:
    return html.fromstring(response.content.decode())


def test_detail_page_shows_facts_eligibility_and_outcomes(
    client, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    ctgov.expect_request("/api/v2/studies/NCT02210780").respond_with_data(
        recording("aact/study_NCT02210780.json"), content_type=JSON
    )

    response = client.get("/trialscout/NCT02210780/")

    assert response.status_code == 200
    doc = page(response)
    assert doc.cssselect("h1")[0].text_content() == (
        "Study of Dupilumab and Immune Responses in Adults With Atopic Dermatitis (AD)"
    )
    facts = {
        dt.text_content(): dt.getnext().text_content().strip()
        for dt in doc.cssselect(".card dl.facts")[0].cssselect("dt")
    }
    assert facts["Status"] == "Completed"
    assert facts["Phase"] == "Phase 2"
    assert facts["Study type"] == "Interventional"
    assert facts["Lead sponsor"] == "Regeneron Pharmaceuticals"
    assert facts["Enrollment"] == "194 participants (actual)"
    assert facts["Locations"] == "42"
    assert doc.xpath("//a[text()='NCT02210780']/@href") == ["https://clinicaltrials.gov/study/NCT02210780"]
    inclusion_items = doc.cssselect("#inclusion-criteria ol > li")
    exclusion_items = doc.cssselect("#exclusion-criteria ol > li")
    assert len(inclusion_items) == 5
    assert len(exclusion_items) == 7
    assert inclusion_items[0].text_content().startswith("Male or female adults ages 18 to 64 years")
    assert "[Eichenfeld 2004]" in inclusion_items[0].text_content()
    assert len(doc.cssselect("#primary-outcomes tbody tr")) == 1
    assert len(doc.cssselect("#secondary-outcomes tbody tr")) == 10
    assert doc.cssselect("#primary-outcomes tbody tr td")[1].text_content() == "Week 16"


def test_detail_page_renders_registry_markup_safely(client) -> None:
    TrialFactory(
        nct_id="NCT02210780",
        inclusion_criteria='* adults <script>alert("x")</script>\n* [link](javascript:alert(1))',
        exclusion_criteria="* **pregnancy**",
    )

    body = client.get("/trialscout/NCT02210780/").content.decode()

    assert "<script>alert" not in body
    # The unsafe link is left as inert text, never an href.
    assert 'href="javascript' not in body
    assert "[link](javascript:alert(1))" in body
    assert "&lt;script&gt;alert" in body
    assert "<strong>pregnancy</strong>" in body


def test_detail_page_without_criteria_headings_shows_the_whole_text(client) -> None:
    TrialFactory(
        nct_id="NCT02210780", eligibility_criteria="* adults with asthma", inclusion_criteria="", exclusion_criteria=""
    )

    doc = page(client.get("/trialscout/NCT02210780/"))

    assert doc.cssselect("#eligibility-criteria li")[0].text_content() == "adults with asthma"
    assert doc.cssselect("#inclusion-criteria") == []


@pytest.mark.parametrize("nct_id", ["NCT123", "not-a-trial", "NCT022107800"])
def test_detail_page_for_an_invalid_nct_id_is_404_with_a_message(client, ctgov: HTTPServer, nct_id: str) -> None:
    response = client.get(f"/trialscout/{nct_id}/")

    assert response.status_code == 404
    assert page(response).cssselect(".message.error")[0].text_content() == (
        f"{nct_id!r} is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951."
    )
    assert ctgov.log == []


def test_detail_page_for_an_unknown_trial_is_404_with_a_message(client, ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT99999999").respond_with_data("Not Found", status=404)

    response = client.get("/trialscout/NCT99999999/")

    assert response.status_code == 404
    assert page(response).cssselect(".message.error")[0].text_content() == (
        "ClinicalTrials.gov has no study NCT99999999; check the NCT number."
    )


def test_detail_page_when_ctgov_is_down_is_a_message_not_an_error_page(client, ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data("", status=500)

    response = client.get("/trialscout/NCT06604689/")

    assert response.status_code == 200
    assert page(response).cssselect(".message.error")[0].text_content() == (
        "ClinicalTrials.gov is not answering right now; try again in a few minutes."
    )


def test_detail_page_of_a_library_trial_when_ctgov_is_down_shows_what_the_library_holds(
    client, ctgov: HTTPServer, settings
) -> None:
    from evidence.models import Study
    from evidence.services.seed import evidence_seed

    evidence_seed()
    study = Study.objects.get(nct_number="NCT04660344")
    settings.CTGOV_BASE_URL = f"http://127.0.0.1:{free_port()}/api/v2/"  # offline: nothing listens

    response = client.get("/trialscout/NCT04660344/")

    assert response.status_code == 200
    tree = page(response)
    assert " ".join(tree.cssselect("h1")[0].text_content().split()) == "IMvigor011 (NCT04660344)"
    assert tree.cssselect('.message[role="status"]')[0].text_content() == (
        "ClinicalTrials.gov is not answering right now; try again in a few minutes. The registry record cannot be "
        "shown; below is what MedCite's evidence library holds about this trial."
    )
    text = " ".join(tree.text_content().split())
    assert "ctDNA-Guided Adjuvant Atezolizumab in Muscle-Invasive Bladder Cancer" in text
    assert study.key_finding in text
    links = {a.text_content(): a.get("href") for a in tree.cssselect(".library-trial-links a")}
    assert links == {
        "IMvigor011 in the evidence library": f"/library/{study.pk}/",
        "PubMed: PMID 41124204": "https://pubmed.ncbi.nlm.nih.gov/41124204/",
        "Publisher (DOI 10.1056/NEJMoa2511885)": "https://doi.org/10.1056/NEJMoa2511885",
        "ClinicalTrials.gov: NCT04660344": "https://clinicaltrials.gov/study/NCT04660344",
    }
    assert not tree.cssselect('[role="alert"]')


def test_detail_page_marks_a_stale_copy(client, ctgov: HTTPServer, settings) -> None:
    from datetime import timedelta

    from django.utils import timezone

    settings.CTGOV_CACHE_TTL_SECONDS = 60
    TrialFactory(nct_id="NCT06604689", fetched_at=timezone.now() - timedelta(days=2))
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data("", status=503)

    response = client.get("/trialscout/NCT06604689/")

    assert response.status_code == 200
    assert re.search(
        r"ClinicalTrials.gov could not be reached; this is the copy fetched on \d{4}-\d{2}-\d{2}\.",
        response.content.decode(),
    )
