"""What the browser tests share besides fixtures: where Chromium is, logging in, the tray, common data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings as django_settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUESTION = "Should a patient with atrial fibrillation and stage 4 chronic kidney disease receive oral anticoagulation?"
PASSWORD = "correct horse battery"
# The Tablizer's recorded search: its query and the PMIDs the fake E-utilities return for it.
PMIDS = ["35123456", "22663011", "28775130", "31978945", "27797938"]
QUERY = '"PTEN"[tiab] AND mutation[tiab]'


def log_in(page: Any, base_url: str) -> None:
    """Log the `clinician` fixture's user in through the login form, from the chat page."""
    page.goto(f"{base_url}/chat/")
    assert "/accounts/login/" in page.url
    page.get_by_label("Username").fill("dr-browser")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base_url}/chat/")


def logged_in_page(browser: Any, live_server: Any, cookie: str) -> Any:
    """Return a new page whose browser context carries the session `cookie`."""
    context = browser.new_context()
    context.add_cookies([{"name": django_settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
    page = context.new_page()
    page.set_default_timeout(10000)
    return page


def ask_in_tray(page: Any, question: str) -> None:
    """Type a question into the page's chat tray and send it."""
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()
