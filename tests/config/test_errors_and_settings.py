import os
import subprocess
import sys
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_unknown_api_path_is_a_json_404(client, settings):
    settings.DEBUG = False
    response = client.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "not_found", "message": "No API endpoint at /api/v1/nothing-here/; see /api/docs/."}
    }


@pytest.mark.django_db
def test_every_response_carries_a_request_id(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="abc-123")
    assert response["X-Request-ID"] == "abc-123"
    generated = client.get("/healthz", HTTP_X_REQUEST_ID="bad id with spaces")["X-Request-ID"]
    assert len(generated) == 32 and generated != "bad id with spaces"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DJANGO_DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=full_env, capture_output=True, text=True, timeout=120
    )


def test_production_mode_requires_secret_key_and_allowed_hosts():
    result = _manage("check", DJANGO_DEBUG="0")
    assert result.returncode != 0
    assert "Production mode (DJANGO_DEBUG=0) needs SECRET_KEY and ALLOWED_HOSTS" in result.stderr


def test_production_settings_pass_check_deploy_without_warnings():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_DEBUG="0",
        SECRET_KEY="x" * 20 + "-production-secret-key-for-the-check-0123456789",
        ALLOWED_HOSTS="medcite.example.org",
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "System check identified no issues" in result.stdout
