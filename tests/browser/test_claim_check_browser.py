"""The citation checker page in Debian's headless Chromium: paste a text, see each sentence's status."""

from __future__ import annotations

import pytest

from pubmed.models import Abstract
from tests.evidence.checker import (
    NOT_FOUND,
    QUOTED,
    SUPPORTED,
    TRAMETINIB,
    UNCITED,
    UNKNOWN,
    UNRELATED,
    stored_trametinib,  # noqa: F401  (fixture)
)
from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    FakeEutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_pasted_text_comes_back_with_a_status_per_sentence(
    live_server, session_cookie, stored_trametinib: Abstract, fake_eutils: FakeEutils, browser  # noqa: F811
) -> None:
    fake_eutils.serve()
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/library/")
    page.get_by_role("link", name="Check citations").click()
    page.get_by_label("Text to check").fill(f"{SUPPORTED} {UNRELATED}\n\n{NOT_FOUND} {UNCITED}")
    page.get_by_role("button", name="Check citations").click()

    rows = page.locator("table.claim-check-table tbody tr")
    rows.first.wait_for()
    statuses = [rows.nth(i).locator(".badge").first.get_attribute("data-status") for i in range(rows.count())]
    assert statuses == ["supported", "not_supported", "identifier_not_found", "no_citation"]
    assert rows.nth(0).locator(".badge").first.inner_text().lower() == "supported"
    assert rows.nth(0).locator(".source-quote").inner_text() == f"PMID {TRAMETINIB}: “{QUOTED}.”"
    assert rows.nth(0).get_by_role("link", name=f"PMID {TRAMETINIB}").get_attribute("href") == (
        f"https://pubmed.ncbi.nlm.nih.gov/{TRAMETINIB}/"
    )
    assert f"PMID {UNKNOWN} is not found in PubMed or the library." in rows.nth(2).inner_text()
    # The pasted text stays in the box for another try.
    assert page.get_by_label("Text to check").input_value().startswith(SUPPORTED)
    context.close()
