"""Login throttling that protects a password without letting anyone lock its owner out.

django-axes counts failed log-ins; this handler decides what the counts lock (settings LOGIN_*):

- a (username, address) pair: LOGIN_FAILURE_LIMIT failures lock that pair for LOGIN_LOCKOUT_MINUTES.
  Someone guessing dr-ada's password from elsewhere locks only themselves, not dr-ada at her desk.
- an address: LOGIN_ADDRESS_FAILURE_LIMIT failures across all usernames lock the address. It is set
  for a clinic behind one NAT address, where colleagues' typos add up, not for one person.
- a username: past LOGIN_USERNAME_SLOW_AFTER failures from all addresses, the username is slowed,
  not locked: from an address that has never signed it in, one attempt per LOGIN_USERNAME_SLOW_SECONDS.
  Addresses it has signed in from before (axes' access log) are not slowed, so its owner is never
  held back by an attack spread over many addresses.

Credentials already issued keep working during any of these: a signed-in session, and API tokens. The
lockout guards the password against guessing; a token cannot be guessed, and refusing it would hand
anyone who can mistype its owner's password a way to cut an integration off.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_failure_limit
from axes.models import AccessAttempt, AccessLog
from django.conf import settings
from django.db.models import Max, Sum
from django.http import HttpRequest
from django.utils import timezone


@dataclass(frozen=True)
class LoginHold:
    """Why log-in is held back for a request: `pair`, `address` or `username`, and for how long."""

    reason: str
    wait: timedelta


class LoginThrottleHandler(AxesDatabaseHandler):
    """axes' database handler with per-pair locks, a per-address ceiling and a per-username slowdown."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        """Return the count axes compares with AXES_FAILURE_LIMIT: the pair's, or the limit itself when held.

        AXES_LOCKOUT_PARAMETERS names only the pair, so axes' own count is the pair's; the address
        ceiling and the username slowdown are applied here, and the reason is kept on the request
        (`request.login_hold`) for the lockout page.
        """
        pair = super().get_failures(request, credentials)
        limit = get_failure_limit(request, credentials)
        hold = self._hold(request, credentials, pair=pair, limit=limit)
        request.login_hold = hold  # type: ignore[attr-defined]
        return pair if hold is None else max(pair, limit)

    def _hold(
        self, request: HttpRequest, credentials: dict[str, Any] | None, *, pair: int, limit: int
    ) -> LoginHold | None:
        cool_off = settings.AXES_COOLOFF_TIME
        if pair >= limit:
            return LoginHold("pair", cool_off)
        recent = AccessAttempt.objects.filter(attempt_time__gte=get_cool_off_threshold(request))
        address = request.axes_ip_address  # type: ignore[attr-defined]
        from_address = recent.filter(ip_address=address).aggregate(n=Sum("failures_since_start"))["n"] or 0
        if from_address >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            return LoginHold("address", cool_off)
        username = get_client_username(request, credentials)
        if not username:
            return None
        on_username = recent.filter(username=username).aggregate(
            n=Sum("failures_since_start"), last=Max("attempt_time")
        )
        if (on_username["n"] or 0) < settings.LOGIN_USERNAME_SLOW_AFTER:
            return None
        if AccessLog.objects.filter(username=username, ip_address=address).exists():
            return None  # an address this username has signed in from: its owner, most likely
        wait = on_username["last"] + timedelta(seconds=settings.LOGIN_USERNAME_SLOW_SECONDS) - timezone.now()
        return LoginHold("username", wait) if wait > timedelta(0) else None


# django-axes keeps the username it counts in a 255-character column; no account's username is longer
# than 150 (Django's limit), so a longer one is cut to that and counted, never a database error.
USERNAME_MAX_CHARS = 150


def attempted_username(request: Any, credentials: dict[str, Any] | None = None) -> str | None:
    """Return the username a log-in attempt named, cut to USERNAME_MAX_CHARS (AXES_USERNAME_CALLABLE)."""
    field = getattr(settings, "AXES_USERNAME_FORM_FIELD", "username")
    value = credentials.get(field) if credentials else getattr(request, "data", request.POST).get(field)
    return None if value is None else str(value)[:USERNAME_MAX_CHARS]
