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
    return _run("manage.py", *args, **env)


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DJANGO_DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    }
    full_env.update(env)
    return subprocess.run(
        [sys.executable, *args], cwd=BASE_DIR, env=full_env, capture_output=True, text=True, timeout=120
    )


MISSING_SECRET = (
    "MedCite is misconfigured: Production mode (DJANGO_DEBUG=0) needs SECRET_KEY and ALLOWED_HOSTS set in the "
    "environment, e.g. SECRET_KEY=$(openssl rand -hex 32) ALLOWED_HOSTS=medcite.example.org\n"
)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("manage.py", "check"), id="manage.py"),
        pytest.param(("manage.py", "runserver", "127.0.0.1:9"), id="runserver"),
        # What each gunicorn worker does first; exit code 3 makes gunicorn stop instead of respawning.
        pytest.param(("-c", "import config.asgi"), id="gunicorn worker"),
    ],
)
def test_production_misconfiguration_is_one_line_and_a_non_zero_exit(command):
    result = _run(*command, DJANGO_DEBUG="0")
    assert result.returncode == 3
    assert result.stderr == MISSING_SECRET  # the whole of it: no traceback before the message
    short = _run(*command, DJANGO_DEBUG="0", SECRET_KEY="short", ALLOWED_HOSTS="medcite.example.org")
    assert (short.returncode, short.stderr) == (
        3, "MedCite is misconfigured: SECRET_KEY must be at least 50 characters long in production.\n"
    )


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
