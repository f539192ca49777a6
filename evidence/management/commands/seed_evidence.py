"""`manage.py seed_evidence`: load the curated library, its vocabulary and decision aids (idempotent)."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evidence.services.seed import SEED_PATH, SeedError, evidence_seed
from evidence.services.seed_aids import decision_aids_seed
from evidence.services.vocabulary_seed import vocabulary_seed


class Command(BaseCommand):
    help = (
        "Load the curated landmark studies and guidance items into the evidence library, then the tag vocabulary "
        "and the decision-aid diagrams that rest on the library's findings. Idempotent: "
        "a re-run changes nothing unless the seed file changed; rows edited by a curator since the last "
        "seed are kept unless --overwrite-curator-edits is given. The whole file is validated first; "
        "an invalid file writes nothing and exits non-zero."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--path", type=Path, default=None, help=f"Seed JSON file to load (default: {SEED_PATH})."
        )
        parser.add_argument(
            "--overwrite-curator-edits", action="store_true",
            help="Also reset rows a curator changed after they were seeded to the seed file's values.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = evidence_seed(
                path=options["path"], overwrite_curator_edits=options["overwrite_curator_edits"]
            )
            vocabulary = vocabulary_seed(overwrite_curator_edits=options["overwrite_curator_edits"])
            aids = decision_aids_seed(overwrite_curator_edits=options["overwrite_curator_edits"])
        except SeedError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Guidance items: {result.guidance_items}.")
        self.stdout.write(self.style.SUCCESS(f"Studies: {result.studies}."))
        self.stdout.write(f"Curated findings: {result.findings} (new and changed findings await a curator's review).")
        self.stdout.write(f"Vocabulary tags: {vocabulary.tags}.")
        self.stdout.write(f"Anchor scenarios: {vocabulary.scenarios}.")
        self.stdout.write(f"Classification rules: {vocabulary.rules}.")
        self.stdout.write(f"Abbreviations and lay terms: {vocabulary.abbreviations}.")
        self.stdout.write(f"Drug classes: {vocabulary.drug_classes}.")
        self.stdout.write(f"Curated words (word classes): {vocabulary.words}.")
        self.stdout.write(f"Decision aids: {aids}.")
