"""`manage.py evaluate`: run the golden questions and report citation quality."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from chat.answer_settings import answer_settings
from chat.services.evaluation import GOLDEN_PATH, GoldenError, QuestionScore, evaluate, load_golden


class Command(BaseCommand):
    help = (
        "Answer the golden clinical questions and print citation coverage, GREEN/YELLOW/RED counts, "
        "abstention rate, fabricated identifiers shown to the reader (must be 0) and retrieval recall "
        "of the expected identifiers. Exits 1 if any fabricated identifier was shown."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--golden", type=Path, default=GOLDEN_PATH, help=f"Golden questions (default {GOLDEN_PATH})."
        )
        parser.add_argument("--limit", type=int, help="Only the first N questions.")
        parser.add_argument("--scenario", help="Only questions of this scenario (e.g. mrd_oncology, hfpef_ckd).")
        parser.add_argument("--provider", choices=["extractive", "anthropic", "openai"], help="Override LLM_PROVIDER.")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            questions = load_golden(options["golden"])
        except GoldenError as exc:
            raise CommandError(str(exc)) from exc
        if options["scenario"]:
            questions = [question for question in questions if question.scenario == options["scenario"]]
            if not questions:
                raise CommandError(f"No golden question has scenario {options['scenario']!r}.")
        if options["limit"] is not None:
            if options["limit"] < 1:
                raise CommandError("--limit must be at least 1.")
            questions = questions[: options["limit"]]
        try:
            settings = answer_settings(**({"provider": options["provider"]} if options["provider"] else {}))
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc

        def progress(score: QuestionScore) -> None:
            if options["json"]:
                return
            marks = (
                f"{len(score.expected_cited)}/{len(score.expected)} cited, {len(score.expected_retrieved)} retrieved"
            )
            self.stdout.write(
                f"{score.id:<10} {score.confidence:<6} {'abstained ' if score.abstained else ''}{marks}"
                f"{'  FABRICATED: ' + ', '.join(score.fabricated) if score.fabricated else ''}  ({score.seconds:.2f} s)"
            )

        summary = evaluate(questions=questions, settings=settings, progress=progress)
        if options["json"]:
            self.stdout.write(json.dumps(summary.as_dict(), indent=2))
        else:
            counts = summary.confidence
            self.stdout.write("")
            self.stdout.write(
                f"Questions: {summary.questions} (settings {settings.short_hash()}, provider {settings.provider})"
            )
            self.stdout.write(
                f"Citation coverage: {summary.expected_cited}/{summary.expected} expected identifiers cited "
                f"({summary.citation_coverage:.1%})"
            )
            self.stdout.write(f"Confidence: GREEN {counts['GREEN']} · YELLOW {counts['YELLOW']} · RED {counts['RED']}")
            self.stdout.write(
                f"Abstention rate: {summary.abstained}/{summary.questions} ({summary.abstention_rate:.1%}); "
                f"abstained where expected: {summary.abstained_when_expected}/{summary.expected_abstentions}"
            )
            self.stdout.write(f"Fabricated identifiers shown: {len(summary.fabricated)}")
            self.stdout.write(
                f"Retrieval recall: {summary.expected_retrieved}/{summary.expected} expected identifiers retrieved "
                f"({summary.retrieval_recall:.1%})"
            )
            self.stdout.write(
                f"Repaired answers: {summary.repaired}; mean citation density: {summary.mean_density:.2f}"
            )
            self.stdout.write(
                f"Citation recall (claim support): {summary.claims_supported}/{summary.claims_written} statements "
                f"supported by their citations ({summary.citation_recall:.1%}); citation precision: "
                f"{summary.citations_supporting}/{summary.citations_made} ({summary.citation_precision:.1%})"
            )
            self.stdout.write(f"Time: {summary.seconds:.1f} s")
        if summary.fabricated:
            raise CommandError("Fabricated identifiers were shown to the reader: " + "; ".join(summary.fabricated))
