"""The demo account `make run` creates in embedded development mode."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from config.api import CURATOR_GROUP

DEMO_USERNAME = "demo"


@dataclass(frozen=True)
class DemoCredentials:
    username: str
    password: str
    created: bool


def _demo_password(path: Path) -> str:
    """Return the password kept in `path`, creating the file owner-only (0600) from its first byte.

    Opened with O_CREAT | O_EXCL and mode 0600, so it is never readable by others, not even for the
    moment between writing and a chmod; a file another process created first is read instead.
    """
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(12)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(descriptor, "w") as handle:
        handle.write(password + "\n")
    return password


# What a curator may do (as migration evidence/0002 first granted): edit the library's studies and
# guidance, and read the identifier checks.
CURATOR_PERMISSIONS = [
    f"{action}_{model}"
    for model in ("study", "guidanceitem", "finding")
    for action in ("add", "change", "delete", "view")
] + ["view_identifiercheck"]


def curator_group() -> Group:
    """Return the `curator` group with its permissions; re-created if it was deleted since the migration."""
    group, _ = Group.objects.get_or_create(name=CURATOR_GROUP)
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="evidence", codename__in=CURATOR_PERMISSIONS)
    )
    return group


@transaction.atomic
def demo_user_ensure() -> DemoCredentials:
    """Create (or reset) the demo curator and return its credentials.

    A curator, not a superuser: staff in the `curator` group, who edit the evidence library but
    not users, tokens or lockout logs. An account left a superuser by an earlier version is demoted.
    Refuses to run unless the embedded development database is in use, so a demo account can
    never appear on a real deployment. The password is generated once and kept in var/.
    """
    if not settings.EMBEDDED_DATABASE or not settings.DEBUG:
        raise ImproperlyConfigured(
            "The demo user exists only in embedded development mode (no DATABASE_URL, DJANGO_DEBUG=1); "
            "on a real database create accounts with `manage.py createsuperuser`."
        )
    password = _demo_password(settings.VAR_DIR / "demo-password.txt")
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"email": "demo@localhost", "is_staff": True, "is_superuser": False}
    )
    user.is_staff = user.is_active = True
    user.is_superuser = False
    user.set_password(password)
    user.save()
    user.groups.add(curator_group())
    return DemoCredentials(username=DEMO_USERNAME, password=password, created=created)
