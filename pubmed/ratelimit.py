"""Request-rate limiting for NCBI E-utilities, shared by every process that talks to NCBI.

NCBI allows 3 requests in any one-second window per client (10 with an API key). The window is
always shared across processes, so web processes, Celery workers and concurrent `ingest_pubmed`
commands draw from one budget:

- with Redis configured (`REDIS_URL`, or a `redis://` `CELERY_BROKER_URL`) it is a sorted set of
  request timestamps in Redis, taken from the Redis server's clock;
- without Redis it is a small table in PostgreSQL (`NcbiRequestSlot`), stamped with the database
  server's clock, guarded by a transaction-scoped advisory lock.

When Redis is configured but cannot be reached, the limiter logs a warning and uses the PostgreSQL
window until Redis answers again; it never falls back to a window that only one process can see.

An answer that cannot wait long bounds the wait around its requests (`ncbi_budget_wait`): a request
whose slot would come free only later raises `RateLimitBusy` at once instead of queueing, so a
clinician's answer never waits seconds behind other answers' PubMed searches.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
import uuid
from collections.abc import Iterator
from contextvars import ContextVar
from functools import cache
from typing import Protocol

import redis
import structlog
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

logger = structlog.get_logger(__name__)

# Atomically: forget timestamps older than the window; take a slot if one is free (returning 0),
# otherwise return how many microseconds remain until the oldest slot leaves the window.
_ACQUIRE_LUA = """
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local member = ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
if used < limit then
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, math.ceil(window / 1000) + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now
if wait < 1 then wait = 1 end
return wait
"""

# First half of the two-integer advisory lock key ("NCBI" in ASCII), so MedCite's budget locks
# cannot collide with advisory locks other code takes on the same database.
_ADVISORY_LOCK_CLASS = 0x4E434249

# How long to stay on the PostgreSQL window after Redis failed before trying Redis again: each
# failed attempt costs a connect timeout, which should not be paid on every request of an outage.
REDIS_RETRY_AFTER_SECONDS = 30.0


class RateLimiterUnavailable(Exception):
    """No store the budget is shared through could be reached, so no request slot was taken."""


class RateLimitBusy(Exception):
    """No request slot comes free before the caller's deadline: other requests hold the budget right now."""


_max_wait: ContextVar[float | None] = ContextVar("ncbi_budget_wait", default=None)


@contextlib.contextmanager
def ncbi_budget_wait(seconds: float) -> Iterator[None]:
    """Within the block, a request whose slot would come free more than `seconds` later raises RateLimitBusy."""
    token = _max_wait.set(seconds)
    try:
        yield
    finally:
        _max_wait.reset(token)


def _deadline() -> float | None:
    """Return when the request now asking for a slot must give up (None: it may wait as long as it takes)."""
    wait = _max_wait.get()
    return None if wait is None else time.monotonic() + wait


def _check_wait(wait_seconds: float, deadline: float | None) -> None:
    """Raise RateLimitBusy when waiting `wait_seconds` more would pass `deadline`."""
    if deadline is None:
        return
    left = deadline - time.monotonic()
    if wait_seconds > left:
        raise RateLimitBusy(
            f"the NCBI request budget is in use: the next slot frees in {wait_seconds:.2f} s, "
            f"more than the {max(left, 0.0):.2f} s this request may still wait"
        )


class RateLimiter(Protocol):
    limit: int
    window_seconds: float

    def acquire(self) -> None:
        """Block until one request may be sent without exceeding the limit."""


class PostgresRateLimiter:
    """Sliding-window limiter shared through PostgreSQL by every process using the same database and budget.

    Each request takes an `NcbiRequestSlot` row stamped with `clock_timestamp()`. Check-and-take runs in
    one transaction under an advisory lock for the budget, so two processes never both take the last
    slot. The limiter opens its own connection for each `acquire` and commits every check-and-take at once:
    a slot taken inside a caller's open transaction would stay invisible to other processes until that
    transaction commits.
    """

    def __init__(self, *, budget: str, limit: int, window_seconds: float, using: str = DEFAULT_DB_ALIAS) -> None:
        self.limit = limit
        self.window_seconds = window_seconds
        self.budget = budget
        self.using = using
        # Threads of one process queue here rather than on the database lock.
        self._lock = threading.Lock()

    def acquire(self) -> None:
        deadline = _deadline()
        if not self._lock.acquire(timeout=-1 if deadline is None else max(deadline - time.monotonic(), 0.0)):
            # The other threads of this process queue for slots past our deadline.
            raise RateLimitBusy("the NCBI request budget is in use by this process's other requests")
        try:
            self._acquire_locked(deadline)
        finally:
            self._lock.release()

    def _acquire_locked(self, deadline: float | None) -> None:
        database = connections.create_connection(self.using)
        try:
            database.ensure_connection()
            database.set_autocommit(False)
            while True:
                wait = self._take_slot(database)
                if wait <= 0:
                    return
                _check_wait(wait, deadline)
                time.sleep(wait)
        except DatabaseError as exc:
            raise RateLimiterUnavailable(f"PostgreSQL could not record the NCBI request: {exc}") from exc
        finally:
            database.close()

    def _take_slot(self, database: BaseDatabaseWrapper) -> float:
        """Take a slot and return 0, or return the seconds until the oldest slot leaves the window."""
        from pubmed.models import NcbiRequestSlot

        table = NcbiRequestSlot._meta.db_table
        params: dict[str, str | int | float] = {
            "budget": self.budget,
            "limit": self.limit,
            "window": self.window_seconds,
            "lock_class": _ADVISORY_LOCK_CLASS,
        }
        try:
            with database.cursor() as cursor:
                # Held until commit: the check and the insert below see every slot other processes took.
                cursor.execute("SELECT pg_advisory_xact_lock(%(lock_class)s, hashtext(%(budget)s))", params)
                cursor.execute(
                    f"DELETE FROM {table} WHERE budget = %(budget)s "
                    "AND sent_at <= clock_timestamp() - make_interval(secs => %(window)s)",
                    params,
                )
                cursor.execute(
                    f"INSERT INTO {table} (budget, sent_at) SELECT %(budget)s, clock_timestamp() "
                    f"WHERE (SELECT count(*) FROM {table} WHERE budget = %(budget)s) < %(limit)s",
                    params,
                )
                if cursor.rowcount == 1:
                    wait = 0.0
                else:
                    cursor.execute(
                        "SELECT EXTRACT(EPOCH FROM min(sent_at) + make_interval(secs => %(window)s) "
                        f"- clock_timestamp()) FROM {table} WHERE budget = %(budget)s",
                        params,
                    )
                    wait = max(float(cursor.fetchone()[0]), 0.001)
        except BaseException:
            with contextlib.suppress(DatabaseError):
                database.rollback()
            raise
        database.commit()
        return wait


class RedisRateLimiter:
    """Sliding-window limiter shared through Redis by every process using the same key.

    If Redis cannot be reached, requests take their slots from `fallback` (the PostgreSQL window, which
    every process can see too) for `REDIS_RETRY_AFTER_SECONDS`, then Redis is tried again. The switch is
    logged each way.
    """

    def __init__(
        self, *, client: redis.Redis, key: str, limit: int, window_seconds: float, fallback: RateLimiter
    ) -> None:
        self.limit = limit
        self.window_seconds = window_seconds
        self.key = key
        self._client = client
        self._script = client.register_script(_ACQUIRE_LUA)
        self._fallback = fallback
        self._redis_down_until = 0.0

    def acquire(self) -> None:
        if time.monotonic() < self._redis_down_until:
            self._fallback.acquire()
            return
        window_us = int(self.window_seconds * 1_000_000)
        deadline = _deadline()
        while True:
            try:
                wait_us = int(self._script(keys=[self.key], args=[self.limit, window_us, uuid.uuid4().hex]))
            except redis.RedisError as exc:
                logger.warning(
                    "ncbi_rate_limiter_redis_unavailable", error=str(exc), key=self.key, fallback="postgresql",
                    retry_redis_after_seconds=REDIS_RETRY_AFTER_SECONDS,
                )
                self._redis_down_until = time.monotonic() + REDIS_RETRY_AFTER_SECONDS
                self._fallback.acquire()
                return
            if self._redis_down_until:
                logger.info("ncbi_rate_limiter_redis_back", key=self.key)
                self._redis_down_until = 0.0
            if wait_us == 0:
                return
            _check_wait(wait_us / 1_000_000, deadline)
            time.sleep(wait_us / 1_000_000)


def redis_url_for_rate_limit(*, redis_url: str, broker_url: str) -> str:
    """Return the Redis URL to share the limit through: REDIS_URL, else a Redis broker, else ''."""
    if redis_url:
        return redis_url
    if broker_url.startswith(("redis://", "rediss://", "unix://")):
        return broker_url
    return ""


@cache
def _redis_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)


@cache
def _postgres_limiter(budget: str, limit: int, window_seconds: float) -> PostgresRateLimiter:
    return PostgresRateLimiter(budget=budget, limit=limit, window_seconds=window_seconds)


def ncbi_rate_limiter(*, redis_url: str, api_key: str, requests_per_second: int, margin_seconds: float) -> RateLimiter:
    """Return the limiter for NCBI requests made with `api_key` (or none): one budget per key."""
    # NCBI counts per key (or per IP without one); never store the key itself.
    key_id = hashlib.sha256(api_key.encode()).hexdigest()[:16] if api_key else "anonymous"
    budget = f"medcite:ncbi:ratelimit:{key_id}"
    window = 1.0 + margin_seconds
    postgres = _postgres_limiter(budget, requests_per_second, window)
    if redis_url:
        return RedisRateLimiter(
            client=_redis_client(redis_url), key=budget, limit=requests_per_second, window_seconds=window,
            fallback=postgres,
        )
    return postgres
