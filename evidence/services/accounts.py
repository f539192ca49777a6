"""The demo account `make run` creates in embedded development mode."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
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
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    password = secrets.token_urlsafe(12)
    path.write_text(password + "\n")
    path.chmod(0o600)
    return password


@transaction.atomic
def demo_user_ensure() -> DemoCredentials:
    """Create (or reset) the demo curator superuser and return its credentials.

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
        username=DEMO_USERNAME, defaults={"email": "demo@localhost", "is_staff": True, "is_superuser": True}
    )
    user.is_staff = user.is_superuser = user.is_active = True
    user.set_password(password)
    user.save()
    user.groups.add(Group.objects.get(name=CURATOR_GROUP))
    return DemoCredentials(username=DEMO_USERNAME, password=password, created=created)
