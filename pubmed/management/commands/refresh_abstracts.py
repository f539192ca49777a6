"""`manage.py refresh_abstracts`: fetch stored PubMed records again to pick up retractions and corrections."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from evidence.identifiers import is_pmid
from pubmed.clients import EutilsError
from pubmed.models import Abstract, AbstractSource
from pubmed.services.refresh import abstracts_refresh


class Command(BaseCommand):
    help = (
        "Fetch stored abstracts from PubMed again (efetch) and update their publication types, retraction, "
        "erratum and expression-of-concern links and level of evidence. Give PMIDs, or --all; --source limits "
        "--all to abstracts that came from one source (efetch, xml, medline, jsonl)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("pmids", nargs="*", help="PMIDs of stored abstracts")
        parser.add_argument("--all", action="store_true", dest="everything", help="every stored abstract")
        parser.add_argument(
            "--source", action="append", choices=[choice for choice, _ in AbstractSource.choices], default=[],
            help="with --all: only abstracts from this source (repeatable)",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, pmids: list[str], everything: bool, source: list[str], no_progress: bool,
               **options: Any) -> None:
        if bool(pmids) == everything:
            raise CommandError("Give PMIDs to refresh, or --all (not both), e.g. refresh_abstracts 35657320.")
        bad = [pmid for pmid in pmids if not is_pmid(pmid)]
        if bad:
            raise CommandError(f"Not PMIDs: {', '.join(bad)}; use digits only, e.g. 35657320.")
        if source and not everything:
            raise CommandError("--source only applies with --all.")
        queryset = Abstract.objects.all() if everything else Abstract.objects.filter(pmid__in=pmids)
        if source:
            queryset = queryset.filter(source__in=source)
        wanted = list(queryset.order_by("pmid").values_list("pmid", flat=True))
        unknown = sorted(set(pmids) - set(wanted))
        if unknown:
            raise CommandError(f"Not stored, nothing to refresh: {', '.join(unknown)} (use ingest_pubmed to add them).")
        bar = tqdm(total=len(wanted), unit="abstract", desc="refreshing", disable=no_progress, file=self.stderr)

        def progress(done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        try:
            outcome = abstracts_refresh(pmids=wanted, progress=progress)
        except EutilsError as exc:
            raise CommandError(f"PubMed could not be asked: {exc}") from exc
        finally:
            bar.close()
        for error in outcome.errors:
            self.stderr.write(self.style.ERROR(error))
        self.stdout.write(
            f"Refreshed {outcome.refreshed} of {len(wanted)} abstract(s); {len(outcome.retracted)} retracted"
            + (f" (newly: {', '.join(outcome.newly_retracted)})" if outcome.newly_retracted else "")
            + (f"; PubMed has no record for {', '.join(outcome.missing)}" if outcome.missing else "")
            + "."
        )
        if outcome.errors:
            raise CommandError(f"{len(outcome.errors)} batch(es) failed; run the command again to retry them.")
