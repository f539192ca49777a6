"""The Celery application.

With `CELERY_BROKER_URL` set, tasks go to that (Redis) broker and run on `celery -A config worker`;
without it, settings make tasks run eagerly in-process so the product needs no extra services.
"""

import os

from celery import Celery

from config.startup import misconfiguration_exits

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("medcite")
app.config_from_object("django.conf:settings", namespace="CELERY")
with misconfiguration_exits():  # the first read of the settings in every process
    app.conf.broker_url = app.conf.broker_url or "memory://"
app.autodiscover_tasks()
