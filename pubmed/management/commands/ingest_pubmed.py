"""`manage.py ingest_pubmed QUERY [--max N]`: esearch → efetch missing → embed → store, with progress."""

from __future__ import annotations

import shlex
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from pubmed.clients import EutilsError
from pubmed.models import IngestionStatus
from pubmed.services.ingest import MAX_PER_QUERY, IngestionInputError, ingestion_create, ingestion_run


class Command(BaseCommand):
    help = (
        "Search PubMed for QUERY (PubMed syntax), fetch the records not stored yet, embed and store them. "
        "Runs in this process and records an Ingestion job (visible in the admin and the API)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query", metavar="QUERY")
        parser.add_argument("--max", type=int, default=20, dest="max_results",
                            help=f"PMIDs to take from the search (1-{MAX_PER_QUERY}, default 20)")
        parser.add_argument("--no-progress", action="store_true", help="do not draw a progress bar")

    def handle(self, *args: Any, query: str, max_results: int, no_progress: bool, **options: Any) -> None:
        try:
            ingestion = ingestion_create(queries=[query], max_per_query=max_results, enqueue=False)
        except IngestionInputError as exc:
            raise CommandError(str(exc)) from exc
        bar = tqdm(total=0, unit="abstract", desc="fetching", disable=no_progress, file=self.stderr)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            ingestion = ingestion_run(ingestion_id=str(ingestion.pk), progress=progress)
        except EutilsError as exc:
            raise CommandError(f"PubMed could not be searched: {exc}") from exc
        finally:
            bar.close()
        for error in ingestion.errors:
            self.stderr.write(self.style.WARNING(error))
        message = (
            f"Ingestion {ingestion.pk}: {ingestion.status}; {ingestion.found} found, {ingestion.new} new, "
            f"{ingestion.embedded} chunk(s) embedded, {ingestion.failed} failed."
        )
        if ingestion.status == IngestionStatus.PARTIAL:
            # Stored PMIDs are skipped on a second run, so re-running the same command fetches only the failures.
            raise CommandError(
                f"{message} Re-run `manage.py ingest_pubmed {shlex.quote(query)} --max {max_results}` "
                f"to fetch the {ingestion.failed} PMID(s) that failed; the ones stored now are skipped."
            )
        if ingestion.status == IngestionStatus.FAILED:
            raise CommandError(message)
        self.stdout.write(self.style.SUCCESS(message))
