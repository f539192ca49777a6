"""Evidence Scout in headless Chromium: start a run from the page, watch it on a real worker, follow a citation."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client

from tests.factories import UserFactory
from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    corpus,
    corpus_eutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def session_cookie(transactional_db: None) -> str:
    client = Client()
    client.force_login(UserFactory(username="dr-scout"))
    return client.cookies[django_settings.SESSION_COOKIE_NAME].value


@pytest.fixture
def browser() -> Iterator[object]:
    """Chromium; request it last (after database rows), as the other browser tests do."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (make browser)")
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        yield chromium
        chromium.close()


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
