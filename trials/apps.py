from django.apps import AppConfig


class TrialsConfig(AppConfig):
    name = "trials"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Let the citation checker read cached trials for the NCT numbers a text cites."""
        from evidence.services.cited_sources import cited_source_lookup_register
        from trials.selectors import trials_for_nct_ids

        cited_source_lookup_register(kind="nct", lookup=trials_for_nct_ids)
