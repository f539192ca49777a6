"""Browser tests reuse the chat fixtures: fake LLM servers and closed ports for every real service.

Every page a browser test opens is watched for Content-Security-Policy violations: Chromium reports a
blocked script, style, image or connection on the console, and the test fails if any was reported.
"""

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page

from tests.chat.conftest import _llm_server, _no_real_services, fake_anthropic  # noqa: F401


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
