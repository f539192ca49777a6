"""Answers under load: the production server (gunicorn + uvicorn workers) beside `runserver`, same run.

Half of PubMedQA is stored with the seeded library (as in benchmarks/answerability.py), no live
search, extractive composer. Each server is started as a real process on the benchmark database:

- production: the Dockerfile's command (gunicorn, `uvicorn_worker.UvicornWorker`, `config.asgi`,
  `--workers 2`) with `DJANGO_DEBUG=0`, requests sent with `X-Forwarded-Proto: https` as the reverse
  proxy would;
- runserver: `manage.py runserver --noreload` as `make run` serves it (`DJANGO_DEBUG=1`, threaded).

For each concurrency (default 8 and 16) that many clients ask PubMedQA questions back to back through
the API as a user would see them: `POST /api/v1/conversations/` then
`POST .../messages/?stream=1`, reading the server-sent events until `done`. Reported per server and
concurrency: answers, errors (non-200, an `error` event, no `done`, timeouts), answers/s, p50 / p95 /
p99 of the time to the `done` event and to the first event, and how long `/healthz` took meanwhile
(probed every 0.25 s: does a busy server still answer?). API throttles are raised for the
run so the throttle is not what is measured. The machine's load average is printed before and after,
and the servers' CPU seconds per answer, which other programs on the machine barely affect.

    .venv/bin/python benchmarks/serving.py [--concurrency 8,16] [--answers 96] [--servers production,runserver]
                                           [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pubmed.benchmarking import BASE_DIR, is_stored, load_summary, pubmedqa_records, setup_django, store_pubmedqa_half

VENV_BIN = Path(sys.executable).parent
DATABASE = "medcite_bench_serving"
SECRET_KEY = "benchmark-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz-0123456789"
ANSWER_TIMEOUT_SECONDS = 120.0


@dataclass
class Outcome:
    ok: bool
    seconds: float
    first_event_seconds: float
    error: str = ""


@dataclass
class RunResult:
    server: str
    concurrency: int
    outcomes: list[Outcome] = field(default_factory=list)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    health_seconds: list[float] = field(default_factory=list)

    def numbers(self) -> dict[str, object]:
        done = sorted(o.seconds for o in self.outcomes if o.ok)
        first = sorted(o.first_event_seconds for o in self.outcomes if o.ok)
        errors = [o.error for o in self.outcomes if not o.ok]
        return {
            "server": self.server,
            "concurrency": self.concurrency,
            "answers": len(done),
            "errors": len(errors),
            "error_kinds": sorted(set(errors)),
            "answers_per_second": round(len(done) / self.wall_seconds, 2) if self.wall_seconds else 0.0,
            "p50_ms": _ms(percentile(done, 50)),
            "p95_ms": _ms(percentile(done, 95)),
            "p99_ms": _ms(percentile(done, 99)),
            "first_event_p50_ms": _ms(percentile(first, 50)),
            "first_event_p95_ms": _ms(percentile(first, 95)),
            "server_cpu_seconds_per_answer": round(self.cpu_seconds / len(done), 3) if done else None,
            "healthz_during_load_p50_ms": _ms(percentile(sorted(self.health_seconds), 50)),
            "healthz_during_load_max_ms": _ms(max(self.health_seconds, default=None)),
        }


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def percentile(values: list[float], p: float) -> float | None:
    """Return the nearest-rank p-th percentile of sorted `values` (None when empty)."""
    if not values:
        return None
    rank = max(1, -(-len(values) * p // 100))
    return values[int(rank) - 1]


def dockerfile_command() -> list[str]:
    text = (BASE_DIR / "Dockerfile").read_text().replace("\\\n", " ")
    (command,) = re.findall(r"^CMD (\[.*\])\s*$", text, flags=re.MULTILINE)
    return list(json.loads(command))


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_environment(*, production: bool, static_root: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("NCBI_", "ANTHROPIC_", "OPENAI_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=os.environ["DATABASE_URL"],
        LLM_PROVIDER="extractive",
        ANSWER_SETTINGS=json.dumps({"live_search": False}),
        # A stray live call fails at once instead of reaching NCBI or ClinicalTrials.gov.
        NCBI_EUTILS_BASE_URL="http://127.0.0.1:9/entrez/eutils/",
        CTGOV_BASE_URL="http://127.0.0.1:9/api/v2/",
        API_USER_RATE="1000000/min",
        API_ANON_RATE="1000000/min",
        LOG_LEVEL="WARNING",
        REDIS_URL="",
        CELERY_BROKER_URL="",
    )
    if production:
        env.update(
            DJANGO_DEBUG="0",
            SECRET_KEY=SECRET_KEY,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            TRUST_X_FORWARDED_PROTO="1",
            STATIC_ROOT=str(static_root),
        )
    else:
        env["DJANGO_DEBUG"] = "1"
    return env


def start_server(name: str, port: int, logs: Path) -> subprocess.Popen[bytes]:
    production = name == "production"
    env = server_environment(production=production, static_root=logs / "staticfiles")
    if production:
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=BASE_DIR, env=env,
                       check=True)
        command = [part.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for part in dockerfile_command()]
        command[0] = str(VENV_BIN / command[0])
    else:
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    log = (logs / f"{name}.log").open("wb")
    return subprocess.Popen(command, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop_server(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def server_cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    """Return the CPU seconds used so far by the server process and its children (gunicorn's workers)."""
    try:
        root = psutil.Process(process.pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for member in tree:
        try:
            times = member.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


async def wait_until_up(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 180
    async with httpx.AsyncClient(timeout=5) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"{base_url} exited with {process.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if (await client.get(base_url + "/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise SystemExit(f"{base_url} did not answer /healthz within 180 s:\n{log.read_text()[-3000:]}")


async def ask(client: httpx.AsyncClient, question: str) -> Outcome:
    """Ask one question the way the chat page does (new conversation, SSE reply); time it to `done`."""
    started = time.perf_counter()
    first_event = 0.0
    try:
        conversation = await client.post("/api/v1/conversations/", json={})
        if conversation.status_code != 201:
            return Outcome(False, time.perf_counter() - started, 0.0, f"conversation HTTP {conversation.status_code}")
        url = f"/api/v1/conversations/{conversation.json()['id']}/messages/?stream=1"
        async with client.stream("POST", url, json={"question": question},
                                 headers={"Accept": "text/event-stream"}) as response:
            if response.status_code != 200:
                return Outcome(False, time.perf_counter() - started, 0.0, f"HTTP {response.status_code}")
            async for line in response.aiter_lines():
                if line.startswith("event: ") and not first_event:
                    first_event = time.perf_counter() - started
                if line == "event: error":
                    return Outcome(False, time.perf_counter() - started, first_event, "error event")
                if line == "event: done":
                    return Outcome(True, time.perf_counter() - started, first_event)
        return Outcome(False, time.perf_counter() - started, first_event, "stream ended without done")
    except httpx.TimeoutException:
        return Outcome(False, time.perf_counter() - started, first_event, "timeout")
    except httpx.HTTPError as exc:
        return Outcome(False, time.perf_counter() - started, first_event, type(exc).__name__)


async def probe_health(base_url: str, seconds: list[float], stop: asyncio.Event) -> None:
    """GET /healthz every 0.25 s until `stop`, recording how long each took: is the server still responsive?"""
    async with httpx.AsyncClient(base_url=base_url, timeout=ANSWER_TIMEOUT_SECONDS) as client:
        while not stop.is_set():
            started = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                await client.get("/healthz")
            seconds.append(time.perf_counter() - started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.25)


async def load(base_url: str, token: str, questions: list[str], *, concurrency: int, answers: int,
               health_seconds: list[float] | None = None) -> list[Outcome]:
    """Run `concurrency` clients asking back to back until `answers` questions have been asked.

    With `health_seconds`, /healthz is probed meanwhile and each probe's duration appended to it.
    """
    queue: asyncio.Queue[str] = asyncio.Queue()
    for index in range(answers):
        queue.put_nowait(questions[index % len(questions)])
    outcomes: list[Outcome] = []
    headers = {"Authorization": f"Token {token}", "X-Forwarded-Proto": "https"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, headers=headers, limits=limits,
                                 timeout=ANSWER_TIMEOUT_SECONDS) as client:

        async def client_loop() -> None:
            while True:
                try:
                    question = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                outcomes.append(await ask(client, question))

        stop = asyncio.Event()
        probe = None if health_seconds is None else asyncio.create_task(probe_health(base_url, health_seconds, stop))
        await asyncio.gather(*(client_loop() for _ in range(concurrency)))
        stop.set()
        if probe is not None:
            await probe
    return outcomes


def bench_token() -> str:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    user, _ = get_user_model().objects.get_or_create(username="serving-benchmark")
    token, _ = Token.objects.get_or_create(user=user)
    return str(token.key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="8,16", help="comma-separated client counts (default 8,16)")
    parser.add_argument("--answers", type=int, default=96, help="answers per server and concurrency (default 96)")
    parser.add_argument("--servers", default="production,runserver")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args()
    concurrencies = [int(value) for value in args.concurrency.split(",")]
    servers = args.servers.split(",")
    setup_django(database=DATABASE)
    stored = store_pubmedqa_half()
    _, items = pubmedqa_records()
    questions = [item.question for item in items if is_stored(item.pmid)]
    token = bench_token()
    load_before = load_summary()
    results: list[RunResult] = []
    with tempfile.TemporaryDirectory(prefix="medcite-serving-") as scratch:
        logs = Path(scratch)
        for name in servers:
            port = free_port()
            base_url = f"http://127.0.0.1:{port}"
            process = start_server(name, port, logs)
            try:
                asyncio.run(wait_until_up(base_url, process, logs / f"{name}.log"))
                # Warm-up: every worker loads the embedder and opens its database connection.
                asyncio.run(load(base_url, token, questions[-8:], concurrency=4, answers=8))
                for concurrency in concurrencies:
                    cpu_before = server_cpu_seconds(process)
                    health: list[float] = []
                    started = time.perf_counter()
                    outcomes = asyncio.run(load(base_url, token, questions, concurrency=concurrency,
                                                answers=args.answers, health_seconds=health))
                    result = RunResult(server=name, concurrency=concurrency, outcomes=outcomes,
                                       wall_seconds=time.perf_counter() - started,
                                       cpu_seconds=server_cpu_seconds(process) - cpu_before, health_seconds=health)
                    results.append(result)
                    if not args.json:
                        print(_line(result.numbers()), flush=True)
            finally:
                stop_server(process)
    report = {"stored_abstracts": stored, "load_before": load_before, "load_after": load_summary(),
              "runs": [result.numbers() for result in results]}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{stored} abstracts stored; {report['load_before']} before, {report['load_after']} after")


def _line(numbers: dict[str, object]) -> str:
    return (
        f"{numbers['server']:10} c={numbers['concurrency']:<3} answers {numbers['answers']:4}  "
        f"errors {numbers['errors']:3}  {numbers['answers_per_second']:5} answers/s  "
        f"p50/p95/p99 {numbers['p50_ms']}/{numbers['p95_ms']}/{numbers['p99_ms']} ms  "
        f"first event p50/p95 {numbers['first_event_p50_ms']}/{numbers['first_event_p95_ms']} ms  "
        f"server CPU {numbers['server_cpu_seconds_per_answer']} s/answer  "
        f"/healthz meanwhile p50/max {numbers['healthz_during_load_p50_ms']}/{numbers['healthz_during_load_max_ms']} ms"
        + (f"  ({', '.join(numbers['error_kinds'])})" if numbers["errors"] else "")  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
