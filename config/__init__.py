"""MedCite project configuration: settings, URLs, the Celery app and the embedded database."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
