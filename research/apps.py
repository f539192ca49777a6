from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class ResearchConfig(AppConfig):
    name = "research"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Import the `research_pages` module of every installed app, which registers its pages and payloads,
        and register the app's Celery tasks, which `research.dispatch` queues by name."""
        import research.tasks  # noqa: F401
        autodiscover_modules("research_pages")
