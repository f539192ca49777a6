"""The production stack without Docker: what docker-compose runs, started as real processes.

gunicorn with uvicorn workers on `config.asgi` (the Dockerfile's command), a Celery worker and beat
(docker-compose's commands) on a Redis broker of their own, production settings (`DJANGO_DEBUG=0`,
collected static files) and the test database. One test drives all of it, because starting the stack
costs most of the time: an answer streamed over SSE through gunicorn, an ingestion run to completion
on the worker against the fake E-utilities, a task sent by beat, `/healthz`, WhiteNoise and the CSP.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.conftest import BASE_DIR, database_url_for_subprocess, free_port, private_redis_server
from tests.pubmed.conftest import FakeEutils

VENV_BIN = Path(sys.executable).parent
QUESTION = "Does dapagliflozin benefit patients with heart failure and mildly reduced or preserved ejection fraction?"
INGEST_QUERY = "smoke test ingestion query"
# What the reverse proxy in front of the app sends; the stack trusts it (TRUST_X_FORWARDED_PROTO=1).
VIA_PROXY = {"X-Forwarded-Proto": "https"}


def production_environment(**extra: str) -> dict[str, str]:
    """Return the environment of a production process (the variables docker-compose and .env set)."""
    # The browser tests' live server sets DJANGO_ALLOW_ASYNC_UNSAFE in this process; production never does.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NCBI_", "ANTHROPIC_", "OPENAI_")) and key != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_DEBUG="0",
        SECRET_KEY="smoke-test-secret-key-0123456789abcdefghijklmnopqrstuvwxyz-0123456789",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        CSRF_TRUSTED_ORIGINS="https://127.0.0.1",
        LLM_PROVIDER="extractive",
        NCBI_EMAIL="smoke@example.org",
        CTGOV_BASE_URL="http://127.0.0.1:9/api/v2/",
        LOG_FORMAT="json",
    )
    env.update(extra)
    return env


def dockerfile_command() -> list[str]:
    """Return the Dockerfile's CMD (the web server the image runs) as an argument list."""
    text = (BASE_DIR / "Dockerfile").read_text().replace("\\\n", " ")
    (command,) = re.findall(r"^CMD (\[.*\])\s*$", text, flags=re.MULTILINE)
    return list(json.loads(command))


def compose_command(service: str) -> list[str]:
    """Return the command docker-compose runs for `service`."""
    compose = yaml.safe_load((BASE_DIR / "docker-compose.yml").read_text())
    return list(compose["services"][service]["command"])


@dataclass
class Stack:
    base_url: str
    logs: dict[str, Path]
    processes: dict[str, subprocess.Popen[bytes]]

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")

    def assert_running(self) -> None:
        for name, process in self.processes.items():
            assert process.poll() is None, f"{name} exited with {process.returncode}:\n{self.log(name)[-3000:]}"


def _start(name: str, command: list[str], env: dict[str, str], logs: Path) -> tuple[subprocess.Popen[bytes], Path]:
    log = logs / f"{name}.log"
    executable = command[0] if os.sep in command[0] else str(VENV_BIN / command[0])
    with log.open("wb") as out:
        process = subprocess.Popen([executable, *command[1:]], cwd=BASE_DIR, env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
    return process, log


def _wait_for(predicate: Callable[[], object], *, what: str, stack: Stack, timeout: float) -> None:
    """Poll `predicate` until it is true; fail with every process's log tail if it never is or a process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stack.assert_running()
        if predicate():
            return
        time.sleep(0.25)
    pytest.fail(f"{what} did not happen within {timeout:.0f} s; logs:\n"
                + "\n".join(f"--- {name}\n{stack.log(name)[-2000:]}" for name in stack.logs))


@pytest.fixture
def production_stack(transactional_db: None, fake_eutils: FakeEutils, tmp_path: Path) -> Iterator[Stack]:
    """Collect static files, then start gunicorn, a Celery worker and beat with production settings."""
    with private_redis_server() as redis_server:
        port = free_port()
        env = production_environment(
            DATABASE_URL=database_url_for_subprocess(),
            REDIS_URL=f"{redis_server}/0",
            CELERY_BROKER_URL=f"{redis_server}/1",
            TRUST_X_FORWARDED_PROTO="1",
            STATIC_ROOT=str(tmp_path / "staticfiles"),
            NCBI_EUTILS_BASE_URL=fake_eutils.server.url_for("/"),
            DATABASE_POOL_MAX_SIZE="4",
            # Beat's one job, due every two seconds here so the test sees it run.
            EMBED_MISSING_CHUNKS_EVERY_SECONDS="2",
        )
        collected = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=BASE_DIR,
                                   env=env, capture_output=True, text=True, timeout=300)
        assert collected.returncode == 0, collected.stderr[-3000:]

        web = [part.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for part in dockerfile_command()]
        web[web.index("--workers") + 1] = "1"  # one worker is enough to prove it, on a shared machine
        worker = [*compose_command("worker"), "--concurrency=1"]
        beat = compose_command("beat")
        beat[beat.index("--schedule") + 1] = str(tmp_path / "celerybeat-schedule")

        processes: dict[str, subprocess.Popen[bytes]] = {}
        logs: dict[str, Path] = {}
        for name, command in {"web": web, "worker": worker, "beat": beat}.items():
            processes[name], logs[name] = _start(name, command, env, tmp_path)
        stack = Stack(base_url=f"http://127.0.0.1:{port}", logs=logs, processes=processes)
        try:
            _wait_for(lambda: _answers(stack.base_url + "/healthz"), what="gunicorn answering /healthz",
                      stack=stack, timeout=120)
            yield stack
        finally:
            for process in processes.values():
                process.terminate()
            for process in processes.values():
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code in (200, 503)
    except httpx.HTTPError:
        return False


def _sse_events(response: httpx.Response) -> list[tuple[float, str, dict]]:
    """Read an SSE response as it arrives: (arrival time, event name, data) per event."""
    events = []
    name, data = "", ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data += line[6:]
        elif not line and name:
            events.append((time.monotonic(), name, json.loads(data)))
            name, data = "", ""
    return events


@pytest.mark.celery
def test_production_stack_streams_answers_runs_tasks_and_serves_static_files(
    production_stack: Stack, fake_eutils: FakeEutils, recorded_articles: dict[str, bytes]
) -> None:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from evidence.services.seed import evidence_seed
    from evidence.services.vocabulary_seed import vocabulary_seed
    from pubmed.models import Abstract

    evidence_seed()
    vocabulary_seed()
    user = get_user_model().objects.create_user(username="smoke-curator", password="not-used-here")
    api = httpx.Client(base_url=production_stack.base_url, timeout=60,
                       headers={**VIA_PROXY, "Authorization": f"Token {Token.objects.create(user=user).key}"})
    pmids = sorted(recorded_articles)[:3]
    fake_eutils.esearch_ids[INGEST_QUERY] = pmids
    fake_eutils.serve()

    # Health: the database, pgvector and the Redis broker, not the eager fallback.
    health = httpx.get(production_stack.base_url + "/healthz", timeout=10)
    assert health.status_code == 200, health.text
    checks = health.json()["checks"]
    assert (checks["database"]["ok"], checks["pgvector"]["ok"], checks["broker"]) == (True, True,
                                                                                    {"ok": True, "mode": "broker"})

    # Production settings: plain HTTP is sent to HTTPS, except through the proxy.
    plain = httpx.get(production_stack.base_url + "/accounts/login/", timeout=10)
    assert (plain.status_code, plain.headers["location"]) == (
        301, f"https://{plain.request.url.netloc.decode()}/accounts/login/")
    page = httpx.get(production_stack.base_url + "/accounts/login/", headers=VIA_PROXY, timeout=10)
    assert page.status_code == 200
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "object-src 'none'" in csp and "frame-ancestors 'none'" in csp

    # Static files: the hashed name from the manifest, served by WhiteNoise with a far-future cache and gzip.
    (stylesheet,) = re.findall(r'href="(/static/css/medcite\.[0-9a-f]{12}\.css)"', page.text)
    css = httpx.get(production_stack.base_url + stylesheet, headers={**VIA_PROXY, "Accept-Encoding": "gzip"},
                    timeout=10)
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert css.headers["content-encoding"] == "gzip"
    assert "immutable" in css.headers["cache-control"]
    assert ".year-input" in css.text

    # An answer streamed over SSE through gunicorn and the ASGI worker.
    conversation = api.post("/api/v1/conversations/", json={})
    assert conversation.status_code == 201, conversation.text
    started = time.monotonic()
    with api.stream("POST", f"/api/v1/conversations/{conversation.json()['id']}/messages/?stream=1",
                    json={"question": QUESTION}, headers={"Accept": "text/event-stream"}) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"] == "text/event-stream"
        events = _sse_events(stream)
    names = [name for _, name, _ in events]
    assert names[0] == "meta" and names[-1] == "done" and "status" in names, names
    assert "error" not in names
    done = events[-1][2]
    assert done["references"] and not done["abstained"], (done, production_stack.log("web")[-4000:])
    assert done["confidence"] in {"GREEN", "YELLOW", "RED"}
    # Streamed, not buffered: the question's `meta` event reached us while the answer was still being built
    # (a buffered response would deliver every event within the same millisecond).
    assert events[-1][0] - events[0][0] > 0.05, [(round(at - started, 3), name) for at, name, _ in events]

    # Each ASGI request runs in a thread of its own: a persistent connection per thread outlived its request, and
    # at 20 answers a second PostgreSQL refused new clients within seconds. Connections come from a pool now.
    def answered(_: int) -> bool:
        url = f"/api/v1/conversations/{api.post('/api/v1/conversations/', json={}).json()['id']}/messages/?stream=1"
        with api.stream("POST", url, json={"question": QUESTION}, headers={"Accept": "text/event-stream"}) as reply:
            return [name for _, name, _ in _sse_events(reply)][-1] == "done"

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(answered, range(32)))
    assert _database_clients() <= 2 * 4 + 4  # two web workers' pools of 4, the worker's and beat's, this test's


    # An ingestion through the API, run by the Celery worker to completion against the fake E-utilities.
    created = api.post("/api/v1/ingestions/", json={"queries": [INGEST_QUERY], "max_per_query": 3})
    assert created.status_code == 201, created.text
    job_url = f"/api/v1/ingestions/{created.json()['id']}/"

    def finished() -> bool:
        return api.get(job_url).json()["status"] in {"succeeded", "partial", "failed"}

    _wait_for(finished, what="the worker finishing the ingestion", stack=production_stack, timeout=120)
    job = api.get(job_url).json()
    assert (job["status"], job["found"], job["new"], job["failed"]) == ("succeeded", 3, 3, 0), job
    assert sorted(Abstract.objects.filter(pmid__in=pmids).values_list("pmid", flat=True)) == pmids
    assert INGEST_QUERY in [seen.params["term"] for seen in fake_eutils.requests("/esearch.fcgi")]
    assert "pubmed.tasks.fetch_and_cache_task" in production_stack.log("worker")

    # Beat sends its scheduled task to the broker and the worker runs it.
    _wait_for(lambda: re.search(r"embed_missing_chunks_task\[[0-9a-f-]+\] succeeded", production_stack.log("worker")),
              what="the worker running the task beat sent", stack=production_stack, timeout=30)
    assert "Scheduler: Sending due task embed-missing-chunks" in production_stack.log("beat")
    production_stack.assert_running()


def _database_clients() -> int:
    """Return how many connections the test database has from client backends."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND backend_type = 'client backend'")
        return int(cursor.fetchone()[0])


def test_check_deploy_passes_and_x_forwarded_proto_is_not_trusted_by_default(tmp_path: Path) -> None:
    env = production_environment(DATABASE_URL="postgres://unused@127.0.0.1:9/unused", STATIC_ROOT=str(tmp_path))
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        "from django.core.management import call_command; "
        "call_command('check', deploy=True, fail_level='WARNING'); "
        "print('SECURE_PROXY_SSL_HEADER=' + json.dumps(getattr(settings, 'SECURE_PROXY_SSL_HEADER', None)))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=BASE_DIR, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().splitlines()
    assert "System check identified no issues (0 silenced)." in lines, result.stdout + result.stderr
    # Without TRUST_X_FORWARDED_PROTO=1 a client claiming HTTPS in a header is not believed.
    assert "SECURE_PROXY_SSL_HEADER=null" in lines, result.stdout


# --- docker-compose and the image -------------------------------------------------------------------


def test_compose_publishes_the_web_port_on_localhost_only() -> None:
    compose = yaml.safe_load((BASE_DIR / "docker-compose.yml").read_text())
    published = {name: service.get("ports", []) for name, service in compose["services"].items()}
    assert published == {"db": [], "redis": [], "migrate": [], "web": ["127.0.0.1:8000:8000"], "worker": [],
                         "beat": []}
    trusting = [name for name, service in compose["services"].items()
                if str(service.get("environment", {}).get("TRUST_X_FORWARDED_PROTO", "")) == "1"]
    assert trusting == ["web"]


def test_compose_has_no_default_database_password() -> None:
    text = (BASE_DIR / "docker-compose.yml").read_text()
    uses = re.findall(r"\$\{POSTGRES_PASSWORD([^}]*)\}", text)
    assert len(uses) >= 2
    assert all(use.startswith(":?") for use in uses), uses


def test_image_contains_every_app() -> None:
    dockerfile = (BASE_DIR / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\w+) \./\1$", dockerfile, flags=re.MULTILINE))
    from django.apps import apps

    local_apps = {config.name for config in apps.get_app_configs() if Path(config.path).parent == BASE_DIR}
    assert local_apps == {"evidence", "pubmed", "trials", "chat", "research"}
    assert local_apps <= copied, f"Dockerfile does not copy {sorted(local_apps - copied)}"
    # The package is installed after the apps are copied, or `pip install .` leaves some out, and at the versions
    # the models were built with (constraints.txt, copied first).
    install = dockerfile.index("pip install -c constraints.txt .")
    assert install > max(dockerfile.index(f"COPY {app} ") for app in local_apps)
    assert re.search(r"^COPY [^\n]*\bconstraints\.txt\b", dockerfile[:install], flags=re.MULTILINE)


def test_dockerfile_command_runs_gunicorn_with_uvicorn_workers_on_asgi() -> None:
    command = dockerfile_command()
    assert command[:4] == ["gunicorn", "config.asgi:application", "-k", "uvicorn_worker.UvicornWorker"]
    assert shlex.join(command).count("--bind 0.0.0.0:8000") == 1


def test_gpu_override_adds_one_embedding_worker_on_the_queue_every_process_names() -> None:
    services = yaml.safe_load((BASE_DIR / "docker-compose.gpu.yml").read_text())["services"]
    worker = services["embedding-worker"]
    assert worker["command"][:6] == ["celery", "-A", "config", "worker", "-Q", "embedding"]
    assert (worker["environment"]["EMBEDDING_DEVICE"], worker["build"]["args"]) == ("cuda", {"EMBEDDING_GPU": "1"})
    # Web and beat send to the queue the GPU worker consumes; the CPU worker leaves it alone.
    assert {name: service["environment"]["EMBEDDING_QUEUE"] for name, service in services.items()} == {
        "web": "embedding", "worker": "embedding", "beat": "embedding", "embedding-worker": "embedding"
    }
    assert "ARG EMBEDDING_GPU=0" in (BASE_DIR / "Dockerfile").read_text()
