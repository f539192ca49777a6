"""Answer providers: the extractive composer (default), Anthropic, and OpenAI-compatible servers."""

from __future__ import annotations

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
