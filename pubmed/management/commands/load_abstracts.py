"""`manage.py load_abstracts FILE...`: load PubMed XML, MEDLINE text or JSONL files into the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pubmed.models import AbstractSource
from pubmed.parsers import PubmedParseError, detect_format, parse_file
from pubmed.services.store import abstracts_upsert

_SOURCES = {"xml": AbstractSource.XML_FILE, "medline": AbstractSource.MEDLINE_FILE, "jsonl": AbstractSource.JSONL_FILE}


class Command(BaseCommand):
    help = (
        "Load abstracts from PubMed XML (PubmedArticleSet), MEDLINE text, or JSONL files "
        "(one object per line with pmid, title, abstract[, authors, journal, pub_date, mesh_terms]); "
        "upsert them, embed their chunks and print counts. Every file is parsed before anything is stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument("--no-embed", action="store_true", help="store without vectors (run `reembed` later)")
        parser.add_argument("--batch-size", type=int, default=200, help="records per transaction (default 200)")

    def handle(self, *args: Any, files: list[Path], no_embed: bool, batch_size: int, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        parsed = []
        for path in files:
            if not path.is_file():
                raise CommandError(f"{path}: no such file.")
            try:
                kind = detect_format(path, path.read_bytes()[:64])
                records = parse_file(path)
            except PubmedParseError as exc:
                raise CommandError(f"Nothing was stored. {exc}") from exc
            parsed.append((path, kind, records))
            self.stdout.write(f"{path}: {len(records)} record(s) ({kind})")
        totals = {"created": 0, "updated": 0, "unchanged": 0, "embedded": 0}
        for _, kind, records in parsed:
            for start in range(0, len(records), batch_size):
                result = abstracts_upsert(
                    records=records[start:start + batch_size], embed=not no_embed, source=_SOURCES[kind]
                )
                for key in totals:
                    totals[key] += getattr(result, key)
        count = sum(len(records) for _, _, records in parsed)
        self.stdout.write(
            self.style.SUCCESS(
                f"Loaded {count} record(s) from {len(parsed)} file(s): {totals['created']} created, "
                f"{totals['updated']} updated, {totals['unchanged']} unchanged, {totals['embedded']} chunk(s) embedded."
            )
        )
