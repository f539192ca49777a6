"""Evidence Scout in headless Chromium: start a run from the page, watch it on a real worker, follow a citation."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings

from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    corpus,
    corpus_eutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_a_scout_started_from_the_page_shows_progress_then_findings_citing_the_five(
    corpus_eutils: object,  # noqa: F811  (the fixture imported above)
    celery_worker: object,
    live_server: object,
    session_cookie: str,
    browser: object,
) -> None:
    context = browser.new_context()  # type: ignore[attr-defined]
    context.add_cookies([{"name": django_settings.SESSION_COOKIE_NAME, "value": session_cookie,
                          "url": live_server.url}])  # type: ignore[attr-defined]
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{live_server.url}/scout/")  # type: ignore[attr-defined]
    page.fill("#id_drug", "insulin")
    page.fill("#id_disease", "diabetes")
    page.click("#scout-form summary")
    page.fill("#id_synonyms", "insulin therapy")
    page.click("#scout-form button[type=submit]")
    page.wait_for_url("**/scout/*-*/")
    assert page.locator("#scout-steps li").count() == 6
    page.wait_for_selector("#evidence-summary", timeout=60000)  # the script reloads once the run is done
    assert page.locator('#scout-steps li[data-status="done"]').count() == 6
    cited = page.locator("#cited-abstracts li").evaluate_all("items => items.map(item => item.id)")
    assert len(cited) == 5
    first = page.locator("#key-findings a.citation").first
    target = first.get_attribute("href")
    assert target is not None and target.lstrip("#") in cited
    first.click()
    assert page.evaluate("location.hash") == target
    assert page.locator(f"{target} a").get_attribute("href").startswith("https://pubmed.ncbi.nlm.nih.gov/")
    context.close()
