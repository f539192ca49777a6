"""`manage.py reembed`: (re)compute chunk vectors with the current EMBEDDING_MODEL."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from pubmed.embeddings import EmbeddingConfigError, get_embedder
from pubmed.services.store import chunks_reembed


class Command(BaseCommand):
    help = (
        "Embed every chunk whose vector is missing or was made by another model, using EMBEDDING_MODEL "
        "(and create the HNSW index for its dimension). --all re-embeds everything."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--all", action="store_true", dest="everything", help="re-embed every chunk")
        parser.add_argument("--batch-size", type=int, default=256)
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, everything: bool, batch_size: int, no_progress: bool, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        try:
            embedder = get_embedder()
        except EmbeddingConfigError as exc:
            raise CommandError(str(exc)) from exc
        bar = tqdm(total=0, unit="chunk", desc="embedding", disable=no_progress, file=self.stderr)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            done = chunks_reembed(everything=everything, batch_size=batch_size, progress=progress)
        finally:
            bar.close()
        self.stdout.write(self.style.SUCCESS(
            f"Embedded {done} chunk(s) with {embedder.spec.name} ({embedder.spec.dimension}-d, {embedder.backend})."
        ))
