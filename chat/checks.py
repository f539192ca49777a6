"""System checks: refuse to start with answer-pipeline settings that would fail on the first question."""

from __future__ import annotations

from typing import Any

from django.core.checks import Error, register
from django.core.exceptions import ImproperlyConfigured


@register()
def answer_settings_check(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    from chat.answer_settings import answer_settings

    try:
        answer_settings()
    except ImproperlyConfigured as exc:
        return [Error(str(exc), hint="Fix ANSWER_SETTINGS or the LLM_* environment variables.", id="chat.E001")]
    return []
