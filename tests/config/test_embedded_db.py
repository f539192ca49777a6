import json
import os
import subprocess
import sys

from config.embedded_db import _forget_dead_handles


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
