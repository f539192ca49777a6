"""`manage.py load_abstracts FILE...`: load PubMed XML, MEDLINE text or JSONL files (plain or gzip) into the store."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from pubmed.dispatch import load_abstracts_file_enqueue
from pubmed.models import RecordFileLoad
from pubmed.parsers import PubmedParseError
from pubmed.services.bulk_load import (
    COUNTS,
    DEFAULT_BATCH_SIZE,
    FileLoadRun,
    LoadProgress,
    RecordFileBusy,
    RecordFileLoadFailed,
    record_file_load,
)


def _kept(records: int, files_before: int) -> str:
    """Say what stays stored when a file fails: its records before the failure and the files before it."""
    parts = [f"the {records:,} record(s) before it in this file"] if records else []
    parts += [f"the {files_before} file(s) before it"] if files_before else []
    if not parts:
        return "Nothing was stored."
    said = " and ".join(parts)
    return f"{said[0].upper()}{said[1:]} are stored."


class Command(BaseCommand):
    help = (
        "Load abstracts from PubMed XML (PubmedArticleSet, e.g. a baseline file pubmed25nNNNN.xml.gz), MEDLINE text "
        "or JSONL files (one object per line with pmid, title, abstract[, authors, journal, pub_date, mesh_terms]), "
        "plain or gzip-compressed; upsert them, embed their chunks and print counts. Files are streamed and stored "
        "in batches: a load that stops (killed, or refused at a broken record) resumes where it stopped when the "
        "same file is loaded again. PMIDs in DeleteCitation elements are removed from the store."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument("--no-embed", action="store_true", help="store without vectors (run `reembed` later)")
        parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE,
                            help=f"records per transaction (default {DEFAULT_BATCH_SIZE})")
        parser.add_argument("--restart", action="store_true",
                            help="load each file from its first record even if an earlier load of it stopped part-way")
        parser.add_argument("--queue", action="store_true",
                            help="send one task per file to the Celery queue EMBEDDING_QUEUE instead of loading here "
                                 "(needs CELERY_BROKER_URL; the workers must see the files at the same paths)")
        parser.add_argument("--no-progress", action="store_true",
                            help="print neither a progress bar nor progress lines")
        parser.add_argument("--progress-every", type=float, default=10.0, metavar="SECONDS",
                            help="without a terminal, print a progress line at most this often (default 10)")

    def handle(self, *args: Any, files: list[Path], no_embed: bool, batch_size: int, restart: bool, queue: bool,
               no_progress: bool, progress_every: float, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        missing = [path for path in files if not path.is_file()]
        if missing:
            raise CommandError(f"{missing[0]}: no such file.")
        if queue:
            self._enqueue(files, embed=not no_embed, batch_size=batch_size, restart=restart)
            return
        totals = dict.fromkeys(COUNTS, 0)
        for number, path in enumerate(files, start=1):
            try:
                run = record_file_load(
                    path=path, batch_size=batch_size, embed=not no_embed, restart=restart,
                    progress=None if no_progress else self._progress(path, progress_every),
                )
            except RecordFileLoadFailed as exc:
                raise CommandError(
                    f"{exc} {_kept(exc.load.records, number - 1)} Fix the file or download it again, then run the "
                    "command again: stored records are not embedded again."
                ) from exc
            except (PubmedParseError, RecordFileBusy) as exc:
                raise CommandError(f"{exc} {_kept(0, number - 1)}") from exc
            self._report(run, path)
            for key in COUNTS:
                totals[key] += getattr(run, key)
        deleted = (
            f", {totals['deleted']} deleted ({totals['deletions_listed']} PMID(s) listed in DeleteCitation)"
            if totals["deletions_listed"] else ""
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"Loaded {totals['records']} record(s) from {len(files)} file(s): {totals['created']} created, "
                f"{totals['updated']} updated, {totals['unchanged']} unchanged, {totals['embedded']} chunk(s) "
                f"embedded{deleted}."
            )
        )

    def _report(self, run: FileLoadRun, path: Path) -> None:
        load = run.load
        gzip = ", gzip" if path.name.endswith(".gz") else ""
        resumed = f", resumed after entry {load.resumed_after:,}" if load.resumed_after else ""
        deleted = (
            f", {run.deleted} deleted of {run.deletions_listed} PMID(s) listed in DeleteCitation"
            if run.deletions_listed else ""
        )
        self.stdout.write(
            f"{load.path}: {run.records} record(s) ({load.kind}{gzip}){resumed}: {run.created} created, "
            f"{run.updated} updated, {run.unchanged} unchanged, {run.embedded} chunk(s) embedded{deleted}."
        )

    def _progress(self, path: Path, every: float) -> LoadProgress:
        """Return a progress callback: a bar over the file's bytes on a terminal, else a line every `every` seconds."""
        if self.stderr.isatty():
            terminal = getattr(self.stderr, "_out", sys.stderr)
            bar = tqdm(total=path.stat().st_size, unit="B", unit_scale=True, desc=path.name, file=terminal)

            def draw(load: RecordFileLoad, done: int, size: int) -> None:
                bar.set_postfix(records=f"{load.records:,}", refresh=False)
                bar.update(done - bar.n)
                if done >= size:
                    bar.close()

            return draw
        started = time.monotonic()
        last = [started]

        def line(load: RecordFileLoad, done: int, size: int) -> None:
            now = time.monotonic()
            if now - last[0] < every and done < size:
                return
            last[0] = now
            rate = load.records / max(now - started, 1e-9)
            self.stderr.write(
                f"{path.name}: {load.records:,} record(s) stored, {done / max(size, 1):.0%} of the file read, "
                f"{rate:,.1f} records/s"
            )

        return line

    def _enqueue(self, files: list[Path], *, embed: bool, batch_size: int, restart: bool) -> None:
        if not settings.CELERY_BROKER_URL:
            raise CommandError(
                "--queue needs CELERY_BROKER_URL (a Redis broker) and a worker consuming the queue "
                f"{settings.EMBEDDING_QUEUE!r} (celery -A config worker -Q {settings.EMBEDDING_QUEUE}); "
                "without them, run the command without --queue."
            )
        for path in files:
            result = load_abstracts_file_enqueue(
                path=str(path.resolve()), embed=embed, batch_size=batch_size, restart=restart
            )
            self.stdout.write(f"{path}: queued as task {result.id} on queue {settings.EMBEDDING_QUEUE!r}.")
