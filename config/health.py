"""`GET /healthz`: is the database up, is pgvector installed, is the broker reachable."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


def _check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "down"; the message says why
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}".strip()}
    return {"ok": True, "vendor": connection.vendor, "embedded": settings.EMBEDDED_DATABASE}


def _check_pgvector() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except Exception as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    if row is None:
        return {"ok": False, "error": "The pgvector extension is not installed; run `manage.py migrate`."}
    return {"ok": True, "version": row[0]}


def _check_broker() -> dict[str, Any]:
    if not settings.CELERY_BROKER_URL:
        return {"ok": True, "mode": "eager", "detail": "No CELERY_BROKER_URL: tasks run in-process."}
    from config.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        return {"ok": False, "mode": "broker", "error": f"{type(exc).__name__}: {exc}"}
    return {"ok": True, "mode": "broker"}


def health_report() -> dict[str, Any]:
    """Return the status of each dependency and an overall `status` of ok or degraded."""
    checks = {"database": _check_database()}
    checks["pgvector"] = _check_pgvector() if checks["database"]["ok"] else {"ok": False, "error": "database down"}
    checks["broker"] = _check_broker()
    healthy = all(check["ok"] for check in checks.values())
    return {"status": "ok" if healthy else "degraded", "checks": checks}


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(report, status=200 if report["status"] == "ok" else 503)
