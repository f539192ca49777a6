"""`manage.py search_abstracts QUERY [--k N] [--json]`: hybrid search over the stored abstracts."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from pubmed.services.search import hybrid_search


class Command(BaseCommand):
    help = "Search the stored abstracts (vector + full-text, reranked) and print the best k."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("query", metavar="QUERY")
        parser.add_argument("--k", type=int, default=10, help="results to return (1-100, default 10)")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help='print [{"pmid", "score", "title", ...}] as JSON')
        parser.add_argument("--mesh", action="append", default=[], help="only abstracts with this MeSH term")
        parser.add_argument("--exclude-mesh", action="append", default=[])
        parser.add_argument("--year-from", type=int)
        parser.add_argument("--year-to", type=int)
        parser.add_argument("--no-rerank", action="store_true")

    def handle(self, *args: Any, query: str, k: int, as_json: bool, **options: Any) -> None:
        try:
            hits = hybrid_search(
                query=query, k=k, mesh_include=options["mesh"], mesh_exclude=options["exclude_mesh"],
                year_from=options["year_from"], year_to=options["year_to"], rerank=not options["no_rerank"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if as_json:
            payload = [
                {"pmid": hit.pmid, "score": hit.score, "title": hit.title, "doc_id": hit.doc_id,
                 "chunk_id": hit.chunk_id, "journal": hit.journal, "year": hit.year, "text": hit.text}
                for hit in hits
            ]
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
            return
        if not hits:
            self.stdout.write("No stored abstract matches; ingest some with `manage.py ingest_pubmed QUERY`.")
        for rank, hit in enumerate(hits, start=1):
            self.stdout.write(f"{rank:>2}. PMID {hit.pmid} [{hit.chunk_id}] score {hit.score:.4f} — "
                              f"{hit.title} ({hit.journal} {hit.year or 'n.d.'})")
