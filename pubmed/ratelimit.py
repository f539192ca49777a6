"""Request-rate limiting for NCBI E-utilities, shared by every process that talks to NCBI.

NCBI allows 3 requests in any one-second window per client (10 with an API key). With a Redis
configured (`REDIS_URL`, or a `redis://` `CELERY_BROKER_URL`) the window lives in Redis as a
sorted set of request timestamps taken from the Redis server's own clock, so web processes and
every Celery worker draw from one budget. Without Redis a process-local window is used, which is
correct for a single process (the default, eager-task setup).
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections import deque
from functools import cache
from typing import Protocol

import redis
import structlog

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


class RateLimiter(Protocol):
    limit: int
    window_seconds: float

    def acquire(self) -> None:
        """Block until one request may be sent without exceeding the limit."""


class LocalRateLimiter:
    """Sliding-window limiter for the threads of one process."""

    def __init__(self, *, limit: int, window_seconds: float) -> None:
        self.limit = limit
        self.window_seconds = window_seconds
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                while self._sent and self._sent[0] <= now - self.window_seconds:
                    self._sent.popleft()
                if len(self._sent) < self.limit:
                    self._sent.append(now)
                    return
                wait = self._sent[0] + self.window_seconds - now
            time.sleep(max(wait, 0.001))


class RedisRateLimiter:
    """Sliding-window limiter shared through Redis by every process using the same key.

    If Redis cannot be reached the limiter logs a warning and falls back to a process-local
    window rather than failing the request: NCBI's own 429 answers are still retried.
    """

    def __init__(self, *, client: redis.Redis, key: str, limit: int, window_seconds: float) -> None:
        self.limit = limit
        self.window_seconds = window_seconds
        self.key = key
        self._client = client
        self._script = client.register_script(_ACQUIRE_LUA)
        self._fallback = LocalRateLimiter(limit=limit, window_seconds=window_seconds)

    def acquire(self) -> None:
        window_us = int(self.window_seconds * 1_000_000)
        while True:
            try:
                wait_us = int(self._script(keys=[self.key], args=[self.limit, window_us, uuid.uuid4().hex]))
            except redis.RedisError as exc:
                logger.warning("ncbi_rate_limiter_redis_unavailable", error=str(exc), key=self.key)
                self._fallback.acquire()
                return
            if wait_us == 0:
                return
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
def _local_limiter(key: str, limit: int, window_seconds: float) -> LocalRateLimiter:
    return LocalRateLimiter(limit=limit, window_seconds=window_seconds)


def ncbi_rate_limiter(*, redis_url: str, api_key: str, requests_per_second: int, margin_seconds: float) -> RateLimiter:
    """Return the limiter for NCBI requests made with `api_key` (or none): one budget per key."""
    # NCBI counts per key (or per IP without one); never put the key itself into Redis.
    key_id = hashlib.sha256(api_key.encode()).hexdigest()[:16] if api_key else "anonymous"
    key = f"medcite:ncbi:ratelimit:{key_id}"
    window = 1.0 + margin_seconds
    if redis_url:
        return RedisRateLimiter(
            client=_redis_client(redis_url), key=key, limit=requests_per_second, window_seconds=window
        )
    return _local_limiter(key, requests_per_second, window)
