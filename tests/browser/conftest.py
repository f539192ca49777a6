"""Browser tests reuse the chat fixtures: fake LLM servers and closed ports for every real service."""

from tests.chat.conftest import _llm_server, _no_real_services, fake_anthropic  # noqa: F401
