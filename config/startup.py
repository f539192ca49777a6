"""Start-up guard: a misconfiguration is reported in one line, not after a traceback, by every entry point.

Every process (manage.py, gunicorn's workers, Celery) imports the `config` package first, and its Celery
app reads the settings on import (config/celery.py), so the guard there covers them all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ImproperlyConfigured

# gunicorn stops the whole server when a booting worker exits with 3 (WORKER_BOOT_ERROR) instead of
# starting workers again and again; for manage.py and Celery it is simply non-zero.
MISCONFIGURED_EXIT_CODE = 3


@contextmanager
def misconfiguration_exits(*, exit_code: int = MISCONFIGURED_EXIT_CODE) -> Iterator[None]:
    """Turn ImproperlyConfigured into one line on stderr and exit `exit_code`.

    The settings modules raise ImproperlyConfigured with a message that says what to set; under the
    traceback of the import machinery an operator would scroll past it.
    """
    try:
        yield
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"MedCite is misconfigured: {exc}\n")
        sys.stderr.flush()
        raise SystemExit(exit_code) from None
