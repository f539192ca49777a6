"""Fixtures of the browser tests: Chromium, the users who log in, the seeded library; and the chat fixtures
(fake LLM servers and closed ports for every real service).

Every page a browser test opens is watched for Content-Security-Policy violations: Chromium reports a
blocked script, style, image or connection on the console, and the test fails if any was reported.
"""

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page

from evidence.models import Tag
from tests.browser.pages import CHROMIUM, CHROMIUM_ARGS
from tests.chat.conftest import _llm_server, _no_real_services, fake_anthropic  # noqa: F401
from tests.conftest import seed_library
from tests.factories import UserFactory


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Chromium; request it last: once Playwright's event loop runs in this thread, asgiref gives ORM
    calls made here a connection of their own that nobody closes, so create database rows first."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed at /usr/bin/chromium (make browser)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; Django's ORM calls here are still synchronous.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def clinician(db: None) -> Any:
    """The chat user who logs in through the form (`pages.log_in`)."""
    return UserFactory(username="dr-browser")


@pytest.fixture
def seeded(transactional_db: None) -> None:
    # As `seed_evidence` (and so `make run`) does: the library and the vocabulary it is judged with.
    seed_library()


@pytest.fixture
def researcher(transactional_db: None) -> Any:
    """A logged-in researcher, with the disease tag the trial searches are judged by."""
    Tag.objects.create(
        code="melanoma", kind="disease", label="melanoma", synonyms=["melanoma"], mesh_terms=["Melanoma"]
    )
    return UserFactory(username="dr-scout")


@pytest.fixture
def session_cookie(researcher: Any) -> str:
    """Log the researcher in (before the browser starts: no ORM calls in Playwright's thread) and return the cookie."""
    client = Client()
    client.force_login(researcher)
    return client.cookies[django_settings.SESSION_COOKIE_NAME].value


@pytest.fixture(autouse=True)
def csp_violations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Collect the CSP violations reported on every page opened during the test; fail the test on any."""
    violations: list[str] = []

    def watch(new_page: Callable[..., Page]) -> Callable[..., Page]:
        def watched(self: Any, *args: Any, **kwargs: Any) -> Page:
            page = new_page(self, *args, **kwargs)

            def collect(message: ConsoleMessage) -> None:
                if "Content Security Policy" in message.text:
                    violations.append(f"{page.url}: {message.text}")

            page.on("console", collect)
            return page

        return watched

    monkeypatch.setattr(Browser, "new_page", watch(Browser.new_page))
    monkeypatch.setattr(BrowserContext, "new_page", watch(BrowserContext.new_page))
    yield violations
    assert violations == []
