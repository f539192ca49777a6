"""The demo account `make run` creates: a curator, with its password file owner-only from the start."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from evidence.services.accounts import DEMO_USERNAME, demo_user_ensure
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def development(settings: Any, tmp_path: Path) -> Path:
    settings.DEBUG = True
    settings.EMBEDDED_DATABASE = True
    settings.VAR_DIR = tmp_path
    return tmp_path


class _ModeWatch:
    """Record the password file's mode at every audited operation (open, write, chmod...) while active.

    sys.addaudithook hooks cannot be removed, so one hook serves every test and `watching` switches it.
    """

    watching: Path | None = None
    modes: list[int] = []  # one shared record, reset per test
    _inside = False

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if cls.watching is None or cls._inside:
            return
        cls._inside = True
        try:
            cls.modes.append(stat.S_IMODE(os.stat(cls.watching).st_mode))
        except OSError:
            pass  # not created yet
        finally:
            cls._inside = False


sys.addaudithook(_ModeWatch.hook)


@pytest.fixture
def mode_watch(development: Path) -> Iterator[type[_ModeWatch]]:
    previous_umask = os.umask(0o022)  # the common default, under which a plain write makes a 0644 file
    _ModeWatch.modes = []
    _ModeWatch.watching = development / "demo-password.txt"
    try:
        yield _ModeWatch
    finally:
        _ModeWatch.watching = None
        os.umask(previous_umask)


def test_the_password_file_is_owner_only_from_its_first_moment(mode_watch: type[_ModeWatch]) -> None:
    credentials = demo_user_ensure()
    path = mode_watch.watching
    assert path is not None
    mode_watch.watching = None
    assert path.read_text() == credentials.password + "\n"
    assert mode_watch.modes, "no audited operation saw the file"
    # Written, then chmod'ed, it was 0644 until the chmod; created 0600, it never is.
    assert set(mode_watch.modes) == {0o600}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert demo_user_ensure().password == credentials.password  # kept between runs


def test_the_demo_account_is_a_curator_not_a_superuser(development: Path, client: Client) -> None:
    UserFactory(username=DEMO_USERNAME, is_staff=True, is_superuser=True)  # as an earlier version made it
    output = StringIO()
    call_command("ensure_demo_user", "--url", "http://127.0.0.1:8123/", stdout=output)
    # The address printed is the one `make run` serves on (PORT=8123 make run), not a fixed 8000.
    printed = output.getvalue()
    assert "log in at http://127.0.0.1:8123/accounts/login/ — admin at http://127.0.0.1:8123/admin/" in printed
    assert "a curator: edits the evidence library at /admin/, not users, tokens or lockouts" in output.getvalue()
    demo = get_user_model().objects.get(username=DEMO_USERNAME)
    assert (demo.is_staff, demo.is_superuser, list(demo.groups.values_list("name", flat=True))) == (
        True, False, ["curator"]
    )
    assert demo.has_perm("evidence.change_study") and not demo.has_perm("auth.change_user")
    password = (development / "demo-password.txt").read_text().strip()
    signed_in = client.post("/accounts/login/", {"username": DEMO_USERNAME, "password": password})
    assert signed_in.status_code == 302
    assert client.get("/admin/evidence/study/").status_code == 200
    assert client.get("/admin/auth/user/").status_code == 403
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 403
    assert client.get("/admin/axes/accessattempt/").status_code == 403


def test_the_demo_account_gets_a_curator_group_deleted_since_the_migration_back(development: Path) -> None:
    from django.contrib.auth.models import Group

    Group.objects.filter(name="curator").delete()
    demo_user_ensure()
    demo = get_user_model().objects.get(username=DEMO_USERNAME)
    assert list(demo.groups.values_list("name", flat=True)) == ["curator"]
    assert demo.has_perm("evidence.change_guidanceitem") and demo.has_perm("evidence.view_identifiercheck")
    assert not demo.has_perm("auth.change_user")
