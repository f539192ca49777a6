import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_pgvector_and_eager_broker(client, settings):
    settings.CELERY_BROKER_URL = ""
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["pgvector"]["ok"] is True
    assert body["checks"]["pgvector"]["version"].count(".") == 2
    assert body["checks"]["broker"]["mode"] == "eager"


def test_healthz_is_503_and_explains_when_pgvector_is_missing(client):
    # Dropping the extension inside the test transaction; the rollback restores it.
    with connection.cursor() as cursor:
        cursor.execute("DROP EXTENSION vector CASCADE")
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["pgvector"] == {
        "ok": False,
        "error": "The pgvector extension is not installed; run `manage.py migrate`.",
    }


def test_healthz_is_503_when_broker_is_unreachable(client, settings):
    from config.celery import app

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    saved = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:1/0"
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = saved
    assert response.status_code == 503
    assert response.json()["checks"]["broker"]["ok"] is False


def test_healthz_ok_with_real_redis_broker(client, settings, redis_url):
    from config.celery import app

    settings.CELERY_BROKER_URL = redis_url
    saved = app.conf.broker_url
    app.conf.broker_url = redis_url
    try:
        response = client.get("/healthz")
    finally:
        app.conf.broker_url = saved
    assert response.status_code == 200
    assert response.json()["checks"]["broker"] == {"ok": True, "mode": "broker"}
