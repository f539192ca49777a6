"""Citation downloads in Debian's headless Chromium: ticked Tablizer rows, and an answer's references."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rispy

from tests.chat.conftest import (  # noqa: F401  (fixtures)
    _eutils_server,
    esearch_for,
    eutils,
    eutils_recording,
)
from tests.research.conftest import abstracts, esearch_serving  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOWN = ["35123456", "22663011", "28775130"]


def test_ticked_tablizer_rows_download_as_ris_and_all_rows_as_csl_json(
    live_server, abstracts, esearch_serving, session_cookie, browser  # noqa: F811
) -> None:
    esearch_serving(SHOWN)
    context = browser.new_context(accept_downloads=True)
    context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{live_server.url}/tablizer/?q=pten")
    page.get_by_label("Select PMID 28775130 for export").check()
    page.get_by_label("Select PMID 35123456 for export").check()
    page.select_option("#tablizer-export-format", "ris")
    with page.expect_download() as download_info:
        page.locator("#tablizer-export button").click()
    download = download_info.value
    assert download.suggested_filename == "medcite-tablizer.ris"
    entries = rispy.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert [entry["accession_number"] for entry in entries] == ["35123456", "28775130"]  # table order

    page.get_by_label("Select PMID 28775130 for export").uncheck()
    page.get_by_label("Select PMID 35123456 for export").uncheck()
    page.select_option("#tablizer-export-format", "csljson")
    with page.expect_download() as download_info:
        page.locator("#tablizer-export button").click()
    items = json.loads(Path(download_info.value.path()).read_text(encoding="utf-8"))
    assert [item["PMID"] for item in items] == SHOWN
    context.close()
