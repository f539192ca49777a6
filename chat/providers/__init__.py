"""Answer providers: the extractive composer (default), Anthropic, and OpenAI-compatible servers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings as django_settings

from chat.answer_settings import AnswerSettings
from chat.providers.base import Provider


def get_provider(settings: AnswerSettings) -> Provider:
    """Return the provider named by `settings.provider`, configured from Django settings."""
    if settings.provider == "anthropic":
        from chat.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            api_key=django_settings.ANTHROPIC_API_KEY,
            base_url=django_settings.ANTHROPIC_BASE_URL,
            timeout=settings.timeout_seconds,
            max_retries=settings.max_retries,
        )
    if settings.provider == "openai":
        from chat.providers.openai_compat import OpenAICompatibleProvider

        return OpenAICompatibleProvider(
            api_key=django_settings.OPENAI_API_KEY,
            base_url=django_settings.OPENAI_BASE_URL,
            timeout=settings.timeout_seconds,
            max_retries=settings.max_retries,
        )
    from chat.providers.extractive import ExtractiveProvider

    return ExtractiveProvider()


def json_completer(settings: AnswerSettings) -> Callable[[str, dict[str, Any]], dict[str, Any]] | None:
    """Return `prompt, schema -> JSON object` for the configured LLM, or None with the extractive provider."""
    provider = get_provider(settings)
    complete = getattr(provider, "complete_json", None)
    if complete is None:
        return None
    return lambda prompt, schema: complete(prompt, schema, model=settings.model)
