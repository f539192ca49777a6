from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig


def _queue_identifier_checks(study_ids: Sequence[int]) -> None:
    from pubmed.tasks import verify_study_identifiers

    verify_study_identifiers.delay(study_ids=list(study_ids))


class PubmedConfig(AppConfig):
    name = "pubmed"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Offer the library admin's identifier check, which needs this app's E-utilities client."""
        from evidence.identifier_checks import identifier_checks_register

        identifier_checks_register(_queue_identifier_checks)
