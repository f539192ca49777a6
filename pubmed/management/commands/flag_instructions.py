"""`manage.py flag_instructions`: mark stored abstracts whose text speaks to an AI, for curators."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from pubmed.services.store import abstracts_flag_instructions


class Command(BaseCommand):
    help = (
        "Re-scan every stored abstract for sentences addressed to an AI (evidence.injection) and record them "
        "on the abstract (admin filter 'instructions to an AI'). Run it after the detector changes; new "
        "records are flagged as they are stored."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        flagged = abstracts_flag_instructions()
        self.stdout.write(f"{flagged} stored abstract(s) hold sentences addressed to an AI.")
