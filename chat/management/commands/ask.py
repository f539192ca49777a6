"""`manage.py ask QUESTION [--json]`: answer one clinical question with verified citations."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from typing import Any

from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management.base import BaseCommand, CommandError

from chat.answer_settings import answer_settings
from chat.pipeline import answer_question
from chat.services.conversations import check_question


class Command(BaseCommand):
    help = (
        "Answer a clinical question from the evidence library and stored PubMed abstracts. Every "
        "identifier in the answer is verified; --json prints the answer document "
        '{"answer", "citations", "references", "confidence", "abstained", "trace"}.'
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("question", nargs="+", help="The question (quote it, or give it as several words).")
        parser.add_argument("--json", action="store_true", help="Print the answer as JSON.")
        parser.add_argument(
            "--provider",
            choices=["extractive", "anthropic", "openai"],
            help="Override LLM_PROVIDER for this answer.",
        )
        parser.add_argument("--k", type=int, help="Abstract chunks to retrieve (default from settings).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            question = check_question(" ".join(options["question"]))
        except ValidationError as exc:
            raise CommandError(exc.messages[0]) from exc
        overrides: dict[str, Any] = {}
        if options["provider"]:
            overrides["provider"] = options["provider"]
        if options["k"] is not None:
            overrides["retrieval_k"] = options["k"]
        try:
            settings = answer_settings(**overrides)
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        result = answer_question(question=question, settings=settings)
        if options["json"]:
            self.stdout.write(json.dumps(result.ask_json(), indent=2, ensure_ascii=False))
            return
        if result.error:
            self.stderr.write(self.style.WARNING(result.error["notice"]))
        self.stdout.write(result.answer)
        if result.references:
            self.stdout.write("\nReferences")
            for reference in result.references:
                parts = (reference["title"], reference["authors"], reference["journal"], reference["year"])
                details = ". ".join(str(part).rstrip(".") for part in parts if part)
                self.stdout.write(f"[{reference['n']}] {details}. {reference['url']}")
        style = {"GREEN": self.style.SUCCESS, "YELLOW": self.style.WARNING}.get(result.confidence, self.style.ERROR)
        self.stdout.write(style(f"\nConfidence: {result.confidence}" + (" (abstained)" if result.abstained else "")))
