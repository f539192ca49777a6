"""The Celery application.

With `CELERY_BROKER_URL` set, tasks go to that (Redis) broker and run on `celery -A config worker`;
without it, settings make tasks run eagerly in-process so the product needs no extra services.
"""

import os

from celery import Celery, Task

from config.startup import misconfiguration_exits

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("medcite")
app.config_from_object("django.conf:settings", namespace="CELERY")
with misconfiguration_exits():  # the first read of the settings in every process
    app.conf.broker_url = app.conf.broker_url or "memory://"
app.autodiscover_tasks()


def task_named(name: str) -> Task:
    """Return the registered task `name` ("app.tasks.function") to queue or run eagerly like the task itself.

    Services queue jobs through their app's `dispatch` module, which looks tasks up here by name instead
    of importing the `tasks` module that imports those services back. Each app's `ready()` imports its
    `tasks` module, so every task is registered before the first request.
    """
    try:
        return app.tasks[name]
    except KeyError:
        raise LookupError(f"No Celery task named {name!r} is registered; is its app's tasks module imported?") from None
