"""Answers under load: the production server (gunicorn + uvicorn workers) beside `runserver`, same run.

Half of PubMedQA is stored with the seeded library (as in benchmarks/answerability.py), extractive
composer. Each server is started as a real process on the benchmark database:

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

Scenarios (`--scenarios`, each on the same store: abstracts added by a scenario and the esearch cache are
removed before the next):

- `off`: live PubMed search off (as before);
- `on`: live search on, against a fake NCBI E-utilities on 127.0.0.1 (tests/pubmed/corpus.py: esearch
  evaluates MedCite's queries over the 1,000 PubMedQA abstracts plus the recorded efetch articles, efetch
  serves their PubMed XML) that answers each request after 150-300 ms and, like NCBI, refuses with HTTP 429
  and the recorded body (`biomcp/esummary_error_429_rate_limit_exceeded.json`) a request beyond 3 in any
  second (10 with `--ncbi-api-key`). Every `--unstored-every`-th question is one whose abstract is *not*
  stored, drawn from a small pool, so several clinicians ask it: it needs PubMed the first time;
- `on+load` / `off+load`: the same while `manage.py load_abstracts` loads a `--bulk-records` baseline-format
  file (benchmarks.common.write_baseline_file) with embedding; answers are asked until the load ends.

With `--redis URL` the servers share Redis (rate-limit window, locks, cache) and a Celery worker runs (the
production stack: a live search the NCBI budget cannot serve in time is queued for it). With
`--server-code DIR` the servers and the load run from another checkout (e.g. `git archive` of the base
commit) on the same database: the "before" numbers of the same run.

    .venv/bin/python benchmarks/serving.py [--concurrency 8,16] [--answers 96] [--servers production,runserver]
                                           [--scenarios off,on,on+load] [--bulk-records 2000] [--redis URL]
                                           [--server-code DIR] [--ncbi-api-key] [--logs DIR] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from werkzeug import Request, Response

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (
    BASE_DIR,
    is_stored,
    load_summary,
    pubmedqa_records,
    setup_django,
    store_pubmedqa_half,
    write_baseline_file,
)

VENV_BIN = Path(sys.executable).parent
DATABASE = "medcite_bench_serving"
SECRET_KEY = "benchmark-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz-0123456789"
ANSWER_TIMEOUT_SECONDS = 120.0
NCBI_LATENCY_SECONDS = (0.15, 0.30)
UNSTORED_POOL = 8  # distinct not-stored questions; several clients ask each
BULK_FIRST_PMID = 95_000_000
LOAD_ANSWER_CAP_SECONDS = 600.0  # keep asking while the load runs, at most this long


@dataclass
class Scenario:
    """One configuration the servers are measured under."""

    name: str
    live_search: bool
    bulk_records: int = 0


@dataclass
class Stack:
    """What the servers are started with besides the scenario: fake NCBI, Redis, the code they run."""

    code_dir: Path
    eutils_url: str = "http://127.0.0.1:9/entrez/eutils/"
    redis_url: str = ""
    ncbi_api_key: str = ""


@dataclass
class Outcome:
    ok: bool
    seconds: float
    first_event_seconds: float
    error: str = ""
    live: str = ""  # what the answer's live search did: "" (not needed), ran, coalesced, busy, deferred, down


def live_outcome(done: dict[str, Any]) -> str:
    """Return what the answer's trace says its live PubMed search did ("" when it did not need one)."""
    trace = done.get("trace") or []
    step = next((s for s in trace if isinstance(s, dict) and s.get("step") == "live_search"), None)
    if step is None:
        return ""
    data = step.get("data") or {}
    if data.get("deferred"):
        return "deferred"
    if data.get("busy"):
        return "busy"
    if not data.get("ran"):
        return "down"
    return "coalesced" if data.get("coalesced") else "ran"


@dataclass
class RunResult:
    server: str
    concurrency: int
    outcomes: list[Outcome] = field(default_factory=list)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    health_seconds: list[float] = field(default_factory=list)
    scenario: str = "off"
    code: str = "this checkout"
    extra: dict[str, object] = field(default_factory=dict)

    def numbers(self) -> dict[str, object]:
        done = sorted(o.seconds for o in self.outcomes if o.ok)
        first = sorted(o.first_event_seconds for o in self.outcomes if o.ok)
        errors = [o.error for o in self.outcomes if not o.ok]
        return {
            "code": self.code,
            "scenario": self.scenario,
            "server": self.server,
            "concurrency": self.concurrency,
            "answers": len(done),
            "errors": len(errors),
            "error_kinds": sorted(set(errors)),
            "answers_per_second": round(len(done) / self.wall_seconds, 2) if self.wall_seconds else 0.0,
            "p50_ms": _ms(percentile(done, 50)),
            "p95_ms": _ms(percentile(done, 95)),
            "p99_ms": _ms(percentile(done, 99)),
            "max_ms": _ms(done[-1] if done else None),
            "slower_than_10s": sum(1 for o in self.outcomes if o.seconds > 10),
            "first_event_p50_ms": _ms(percentile(first, 50)),
            "first_event_p95_ms": _ms(percentile(first, 95)),
            "server_cpu_seconds_per_answer": round(self.cpu_seconds / len(done), 3) if done else None,
            "healthz_during_load_p50_ms": _ms(percentile(sorted(self.health_seconds), 50)),
            "healthz_during_load_max_ms": _ms(max(self.health_seconds, default=None)),
            "live_searches": {kind: sum(1 for o in self.outcomes if o.ok and o.live == kind)
                              for kind in ("ran", "coalesced", "busy", "deferred", "down")},
            **self.extra,
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


def server_environment(*, production: bool, static_root: Path, scenario: Scenario | None = None,
                       stack: Stack | None = None) -> dict[str, str]:
    scenario = scenario or Scenario("off", live_search=False)
    stack = stack or Stack(code_dir=BASE_DIR)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("NCBI_", "ANTHROPIC_", "OPENAI_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=os.environ["DATABASE_URL"],
        LLM_PROVIDER="extractive",
        ANSWER_SETTINGS=json.dumps({"live_search": scenario.live_search}),
        # Without live search a stray call fails at once instead of reaching NCBI; with it, the fake NCBI.
        NCBI_EUTILS_BASE_URL=stack.eutils_url,
        NCBI_API_KEY=stack.ncbi_api_key,
        NCBI_TOOL="medcite-benchmark",
        CTGOV_BASE_URL="http://127.0.0.1:9/api/v2/",
        API_USER_RATE="1000000/min",
        API_ANON_RATE="1000000/min",
        LOG_LEVEL="WARNING",
        REDIS_URL=stack.redis_url,
        CELERY_BROKER_URL=stack.redis_url,
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


def start_server(name: str, port: int, logs: Path, *, scenario: Scenario | None = None,
                 stack: Stack | None = None) -> subprocess.Popen[bytes]:
    production = name == "production"
    stack = stack or Stack(code_dir=BASE_DIR)
    env = server_environment(production=production, static_root=logs / "staticfiles", scenario=scenario, stack=stack)
    if production:
        subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=stack.code_dir,
                       env=env, check=True)
        command = [part.replace("0.0.0.0:8000", f"127.0.0.1:{port}") for part in dockerfile_command()]
        command[0] = str(VENV_BIN / command[0])
    else:
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    log = (logs / f"{name}.log").open("wb")
    return subprocess.Popen(command, cwd=stack.code_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def start_worker(logs: Path, *, scenario: Scenario, stack: Stack) -> subprocess.Popen[bytes]:
    """Start the production stack's Celery worker (one process, as docker-compose's `worker` with 1 core each)."""
    env = server_environment(production=True, static_root=logs / "staticfiles", scenario=scenario, stack=stack)
    command = [str(VENV_BIN / "celery"), "-A", "config", "worker", "--concurrency", "1", "--loglevel", "WARNING",
               "-Q", "celery"]
    log = (logs / "worker.log").open("ab")
    return subprocess.Popen(command, cwd=stack.code_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def start_bulk_load(path: Path, logs: Path, *, scenario: Scenario, stack: Stack) -> subprocess.Popen[bytes]:
    """Start `manage.py load_abstracts FILE` (with embedding) as an operator would, beside the servers."""
    env = server_environment(production=True, static_root=logs / "staticfiles", scenario=scenario, stack=stack)
    log = (logs / "load.log").open("ab")
    return subprocess.Popen([sys.executable, "manage.py", "load_abstracts", str(path), "--no-progress"],
                            cwd=stack.code_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


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
            done = False
            async for line in response.aiter_lines():
                if line.startswith("event: ") and not first_event:
                    first_event = time.perf_counter() - started
                if line == "event: error":
                    return Outcome(False, time.perf_counter() - started, first_event, "error event")
                if line == "event: done":
                    done = True
                elif done and line.startswith("data: "):
                    seconds = time.perf_counter() - started
                    return Outcome(True, seconds, first_event, live=live_outcome(json.loads(line[6:])))
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
               health_seconds: list[float] | None = None, while_running: subprocess.Popen[bytes] | None = None,
               ) -> list[Outcome]:
    """Run `concurrency` clients asking back to back until `answers` questions have been asked.

    With `while_running`, they keep asking (cycling through `questions`) until that process has ended
    (at most LOAD_ANSWER_CAP_SECONDS). With `health_seconds`, /healthz is probed meanwhile and each
    probe's duration appended to it.
    """
    asked = 0
    started = time.monotonic()
    outcomes: list[Outcome] = []
    headers = {"Authorization": f"Token {token}", "X-Forwarded-Proto": "https"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

    def next_question() -> str | None:
        nonlocal asked
        running = while_running is not None and while_running.poll() is None
        if asked >= answers and not (running and time.monotonic() - started < LOAD_ANSWER_CAP_SECONDS):
            return None
        asked += 1
        return questions[(asked - 1) % len(questions)]

    async with httpx.AsyncClient(base_url=base_url, headers=headers, limits=limits,
                                 timeout=ANSWER_TIMEOUT_SECONDS) as client:

        async def client_loop() -> None:
            while (question := next_question()) is not None:
                outcomes.append(await ask(client, question))

        stop = asyncio.Event()
        probe = None if health_seconds is None else asyncio.create_task(probe_health(base_url, health_seconds, stop))
        await asyncio.gather(*(client_loop() for _ in range(concurrency)))
        stop.set()
        if probe is not None:
            await probe
    return outcomes


class FakeNcbi:
    """The fake E-utilities over the PubMedQA corpus, with NCBI's latency and its 3 (10 with a key) requests/s.

    A request beyond the budget in any one-second window is refused at once with HTTP 429 and NCBI's
    recorded body, as NCBI does; accepted requests are answered after 150-300 ms.
    """

    def __init__(self, *, per_second: int) -> None:
        from pytest_httpserver import HTTPServer

        from benchmarks.common import SHARED_DATA
        from tests.pubmed.corpus import Corpus, CorpusEutils

        corpus = Corpus.build(
            efetch_files=sorted(p for p in (SHARED_DATA / "eutils").rglob("*.xml") if "efetch" in str(p)),
            pubmedqa=SHARED_DATA / "pubmedqa" / "ori_pqal.json",
        )
        self.eutils = CorpusEutils(corpus=corpus)
        self.rate_limited_body = (SHARED_DATA / "eutils/biomcp/esummary_error_429_rate_limit_exceeded.json").read_text()
        self.per_second = per_second
        self.accepted: list[float] = []
        self.counts: dict[str, int] = {"esearch": 0, "efetch": 0, "429": 0}
        self.lock = threading.Lock()
        self.random = random.Random(20261125)
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request would drown the report
        self.server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        self.server.expect_request("/entrez/eutils/esearch.fcgi").respond_with_handler(
            self._limited(self.eutils.esearch, "esearch"))
        self.server.expect_request("/entrez/eutils/efetch.fcgi").respond_with_handler(
            self._limited(self.eutils.efetch, "efetch"))
        self.server.start()
        self.url = self.server.url_for("/entrez/eutils/")

    def _limited(self, handler: Callable[[Request], Response], endpoint: str) -> Callable[[Request], Response]:
        def handle(request: Request) -> Response:
            now = time.time()
            with self.lock:
                recent = [at for at in self.accepted if now - at < 1.0]
                if len(recent) >= self.per_second:
                    self.counts["429"] += 1
                    return Response(self.rate_limited_body, status=429, content_type="application/json")
                self.accepted = [*recent, now]
                self.counts[endpoint] += 1
                delay = self.random.uniform(*NCBI_LATENCY_SECONDS)
            time.sleep(delay)
            return handler(request)

        return handle

    def take_counts(self) -> dict[str, int]:
        with self.lock:
            counts, self.counts = self.counts, {"esearch": 0, "efetch": 0, "429": 0}
        return counts

    def stop(self) -> None:
        self.server.clear()
        self.server.stop()


def reset_store(stored_pmids: set[str]) -> None:
    """Put the store back as `store_pubmedqa_half` left it: drop added abstracts and the esearch cache."""
    from pubmed.models import Abstract, EsearchCacheEntry
    from pubmed.services.lexemes import lexeme_stats_refresh

    Abstract.objects.exclude(pmid__in=stored_pmids).delete()
    EsearchCacheEntry.objects.all().delete()
    lexeme_stats_refresh()


def flush_redis(url: str) -> None:
    """Empty the benchmark's Redis database (its own db number): limiter window, locks, cache, queue."""
    if url:
        import redis

        redis.Redis.from_url(url).flushdb()


def question_mix(stored: list[str], unstored: list[str], *, every: int) -> list[str]:
    """Return the questions in asking order: stored-abstract questions, every `every`-th from the unstored pool."""
    if not every or not unstored:
        return stored
    mixed, pool = [], unstored[:UNSTORED_POOL]
    for index, question in enumerate(stored):
        if index % every == every - 1:
            mixed.append(pool[(index // every) % len(pool)])
        mixed.append(question)
    return mixed


def bench_token() -> str:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    user, _ = get_user_model().objects.get_or_create(username="serving-benchmark")
    token, _ = Token.objects.get_or_create(user=user)
    return str(token.key)


SCENARIOS = {
    "off": Scenario("off", live_search=False),
    "on": Scenario("on", live_search=True),
    "off+load": Scenario("off+load", live_search=False, bulk_records=1),
    "on+load": Scenario("on+load", live_search=True, bulk_records=1),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", default="8,16", help="comma-separated client counts (default 8,16)")
    parser.add_argument("--answers", type=int, default=96, help="answers per server and concurrency (default 96)")
    parser.add_argument("--servers", default="production,runserver")
    parser.add_argument("--scenarios", default="off", help=f"comma-separated, of {', '.join(SCENARIOS)} (default off)")
    parser.add_argument("--bulk-records", type=int, default=2000, help="records of the concurrent load (default 2000)")
    parser.add_argument("--unstored-every", type=int, default=4,
                        help="with live search, every N-th question's abstract is not stored (0: none; default 4)")
    parser.add_argument("--redis", default="", metavar="URL",
                        help="share this Redis database (flushed!) and run a Celery worker, as in production")
    parser.add_argument("--server-code", type=Path, default=BASE_DIR, metavar="DIR",
                        help="run the servers, worker and load from this checkout (default: this one)")
    parser.add_argument("--ncbi-api-key", action="store_true", help="servers use a (fake) key: NCBI allows 10/s")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--logs", type=Path, metavar="DIR",
                        help="keep the servers', worker's and load's logs in DIR (default: a temporary folder)")
    args = parser.parse_args()
    concurrencies = [int(value) for value in args.concurrency.split(",")]
    servers = args.servers.split(",")
    unknown = [name for name in args.scenarios.split(",") if name not in SCENARIOS]
    if unknown:
        raise SystemExit(f"Unknown scenario(s) {', '.join(unknown)}; use {', '.join(SCENARIOS)}.")
    scenarios = [SCENARIOS[name] for name in args.scenarios.split(",")]
    setup_django(database=DATABASE)
    stored = store_pubmedqa_half()
    records, items = pubmedqa_records()
    stored_pmids = {record.pmid for record in records if is_stored(record.pmid)}
    stored_questions = [item.question for item in items if is_stored(item.pmid)]
    unstored_questions = [item.question for item in items if not is_stored(item.pmid)]
    token = bench_token()
    load_before = load_summary()
    if not args.json:
        print(f"{stored} abstracts stored; code {args.server_code}; {load_before}", flush=True)
    fake = FakeNcbi(per_second=10 if args.ncbi_api_key else 3) if any(s.live_search for s in scenarios) else None
    stack = Stack(code_dir=args.server_code.resolve(), redis_url=args.redis,
                  ncbi_api_key="fake-benchmark-key" if args.ncbi_api_key else "")
    if fake is not None:
        stack.eutils_url = fake.url
    code = "this checkout" if stack.code_dir == BASE_DIR else str(stack.code_dir)
    results: list[RunResult] = []
    try:
        with tempfile.TemporaryDirectory(prefix="medcite-serving-") as scratch:
            logs = args.logs or Path(scratch)
            logs.mkdir(parents=True, exist_ok=True)
            for scenario in scenarios:
                questions = (question_mix(stored_questions, unstored_questions, every=args.unstored_every)
                             if scenario.live_search else stored_questions)
                for name in servers:
                    results.extend(run_server(name, scenario, stack, logs=logs, token=token, questions=questions,
                                              concurrencies=concurrencies, answers=args.answers, args=args,
                                              fake=fake, stored_pmids=stored_pmids, code=code))
    finally:
        if fake is not None:
            fake.stop()
        reset_store(stored_pmids)
    report = {"stored_abstracts": stored, "load_before": load_before, "load_after": load_summary(),
              "runs": [result.numbers() for result in results]}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{stored} abstracts stored; {report['load_before']} before, {report['load_after']} after")


def run_server(name: str, scenario: Scenario, stack: Stack, *, logs: Path, token: str, questions: list[str],
               concurrencies: list[int], answers: int, args: argparse.Namespace, fake: FakeNcbi | None,
               stored_pmids: set[str], code: str) -> list[RunResult]:
    """Start server `name` (and the worker) for `scenario`, measure each concurrency; return the results."""
    results = []
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    reset_store(stored_pmids)
    flush_redis(stack.redis_url)
    process = start_server(name, port, logs, scenario=scenario, stack=stack)
    worker = start_worker(logs, scenario=scenario, stack=stack) if stack.redis_url else None
    try:
        asyncio.run(wait_until_up(base_url, process, logs / f"{name}.log"))
        # Warm-up: every worker loads the embedder and opens its database connection.
        asyncio.run(load(base_url, token, questions[-8:], concurrency=4, answers=8))
        for concurrency in concurrencies:
            reset_store(stored_pmids)
            if fake is not None:
                fake.take_counts()
            bulk = None
            extra: dict[str, object] = {}
            if scenario.bulk_records:
                path = logs / f"bulk-{name}-{concurrency}.xml.gz"
                first = BULK_FIRST_PMID + 100_000 * len(list(logs.glob("bulk-*.xml.gz")))
                bulk_pmids = write_baseline_file(path, count=args.bulk_records, first_pmid=first)
                bulk_started = time.perf_counter()
                bulk = start_bulk_load(path, logs, scenario=scenario, stack=stack)
            cpu_before = server_cpu_seconds(process)
            health: list[float] = []
            started = time.perf_counter()
            outcomes = asyncio.run(load(base_url, token, questions, concurrency=concurrency, answers=answers,
                                        health_seconds=health, while_running=bulk))
            wall = time.perf_counter() - started
            cpu = server_cpu_seconds(process) - cpu_before
            if bulk is not None:
                running = bulk.poll() is None
                if running:
                    stop_server(bulk)
                from pubmed.models import Abstract

                extra.update(bulk_records=args.bulk_records,
                             bulk_stored=Abstract.objects.filter(pmid__in=bulk_pmids).count(),
                             bulk_seconds=round(time.perf_counter() - bulk_started, 1),
                             bulk_stopped_unfinished=running)
            if fake is not None:
                extra.update({f"ncbi_{key}": value for key, value in fake.take_counts().items()})
            result = RunResult(server=name, concurrency=concurrency, outcomes=outcomes, wall_seconds=wall,
                               cpu_seconds=cpu, health_seconds=health, scenario=scenario.name, code=code, extra=extra)
            results.append(result)
            if not args.json:
                print(_line(result.numbers()), flush=True)
    finally:
        stop_server(process)
        if worker is not None:
            stop_server(worker)
    return results


def _line(numbers: dict[str, object]) -> str:
    extra = {key: value for key, value in numbers.items() if key.startswith(("ncbi_", "bulk_", "live_"))}
    return (
        f"[{numbers['code']}] {numbers['scenario']:8} "
        f"{numbers['server']:10} c={numbers['concurrency']:<3} answers {numbers['answers']:4}  "
        f"errors {numbers['errors']:3}  {numbers['answers_per_second']:5} answers/s  "
        f"p50/p95/p99 {numbers['p50_ms']}/{numbers['p95_ms']}/{numbers['p99_ms']} ms  "
        f"first event p50/p95 {numbers['first_event_p50_ms']}/{numbers['first_event_p95_ms']} ms  "
        f"server CPU {numbers['server_cpu_seconds_per_answer']} s/answer  "
        f"/healthz meanwhile p50/max {numbers['healthz_during_load_p50_ms']}/{numbers['healthz_during_load_max_ms']} ms"
        f"  max {numbers['max_ms']} ms, {numbers['slower_than_10s']} over 10 s"
        + (f"  {extra}" if extra else "")
        + (f"  ({', '.join(numbers['error_kinds'])})" if numbers["errors"] else "")  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
