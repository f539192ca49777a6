from django.apps import AppConfig


class PubmedConfig(AppConfig):
    name = "pubmed"
    default_auto_field = "django.db.models.BigAutoField"
