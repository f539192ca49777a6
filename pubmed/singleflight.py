"""Single-flight for NCBI work: identical concurrent requests run once, the others wait and read the caches.

Two clinicians asking the same question at the same moment would each spend the shared NCBI budget on
the same esearch and efetch. `single_flight(key)` lets the first caller do the work while the others
wait for it; when they go on, the esearch cache and the abstract store already hold its results, so
they send nothing to NCBI. The lock is shared by every process, like the rate limiter's budget:

- with Redis configured (`REDIS_URL`, or a `redis://` `CELERY_BROKER_URL`) a Redis lock with a lease,
  so a process that dies holding it frees it when the lease runs out;
- otherwise a PostgreSQL session advisory lock on a connection of its own, freed when that connection
  closes (also when the process dies).

A caller that waited `wait_seconds` in vain goes on without the lock: the work is then done twice,
never lost. A store that cannot be reached is logged and also treated as "go on".
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import redis
import structlog
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from pubmed.ratelimit import _redis_client, redis_url_for_rate_limit

logger = structlog.get_logger(__name__)

# First half of the two-integer advisory lock key ("SFLT"), so these locks cannot collide with others.
_ADVISORY_LOCK_CLASS = 0x53464C54
POLL_SECONDS = 0.05


@dataclass
class Flight:
    """What happened at the lock: `held` (we ran alone), `waited` (another caller held it first)."""

    key: str
    held: bool = False
    waited: bool = False
    waited_seconds: float = 0.0


def flight_key(*parts: object) -> str:
    """Return a short stable key for the work named by `parts` (already normalised by the caller)."""
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).hexdigest()[:32]


@contextmanager
def single_flight(key: str, *, wait_seconds: float, lease_seconds: float) -> Iterator[Flight]:
    """Run the block while holding the lock for `key`, waiting at most `wait_seconds` for another holder.

    Yields a `Flight` saying whether the lock was held and whether (and how long) this caller waited.
    The lease bounds how long a Redis lock outlives a holder that died without releasing it.
    """
    url = redis_url_for_rate_limit(redis_url=settings.REDIS_URL, broker_url=settings.CELERY_BROKER_URL)
    flight = Flight(key=key)
    started = time.monotonic()
    if url:
        lock = _redis_client(url).lock(f"medcite:ncbi:single-flight:{key}", timeout=lease_seconds)
        try:
            flight.held = _acquire_polling(
                lambda: bool(lock.acquire(blocking=False)), wait_seconds=wait_seconds, flight=flight
            )
        except redis.RedisError as exc:
            logger.warning("single_flight_unavailable", store="redis", error=str(exc))
        flight.waited_seconds = round(time.monotonic() - started, 3)
        try:
            yield flight
        finally:
            if flight.held:
                with suppress(redis.RedisError):
                    lock.release()
        return
    with _postgres_lock(key, wait_seconds=wait_seconds, flight=flight):
        flight.waited_seconds = round(time.monotonic() - started, 3)
        yield flight


def _acquire_polling(try_once: Callable[[], bool], *, wait_seconds: float, flight: Flight) -> bool:
    """Call `try_once()` until it returns True or `wait_seconds` pass; note in `flight` whether we waited."""
    deadline = time.monotonic() + wait_seconds
    while True:
        if try_once():
            return True
        flight.waited = True
        if time.monotonic() >= deadline:
            logger.info("single_flight_wait_expired", key=flight.key, wait_seconds=wait_seconds)
            return False
        time.sleep(POLL_SECONDS)


@contextmanager
def _postgres_lock(key: str, *, wait_seconds: float, flight: Flight) -> Iterator[None]:
    """Hold a session advisory lock for `key` on a connection of its own (not the caller's transaction)."""
    params: list[int | str] = [_ADVISORY_LOCK_CLASS, key]
    database = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        database.ensure_connection()
        database.set_autocommit(True)

        def try_once() -> bool:
            with database.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", params)
                return bool(cursor.fetchone()[0])

        flight.held = _acquire_polling(try_once, wait_seconds=wait_seconds, flight=flight)
    except DatabaseError as exc:
        logger.warning("single_flight_unavailable", store="postgresql", error=str(exc))
    try:
        yield
    finally:
        with suppress(DatabaseError):
            if flight.held:
                with database.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", params)
        database.close()
