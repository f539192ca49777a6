"""`manage.py evaluate`: run the golden questions and report citation quality."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from chat.answer_settings import answer_settings
from chat.services.evaluation import QuestionScore, Targets, evaluate
from chat.services.golden import CLINICIAN_PATH, GOLDEN_PATH, GoldenError, load_golden_set
from pubmed.pubmedqa import store_pubmedqa


class Command(BaseCommand):
    help = (
        "Answer the golden clinical questions and print citation coverage, relevance precision (share of "
        "references that address the question), GREEN/YELLOW/RED counts, abstention where expected, "
        "fabricated identifiers shown to the reader (must be 0) and retrieval recall. The PubMedQA "
        "abstracts the out-of-library questions need are stored first (inserted or updated, never "
        "deleted). With --clinician, the clinician set (shorthand, vignettes, follow-ups asked after their "
        "conversation) also reports false abstentions, first sentences that answer and question words "
        "listed as not covered. Exits 1 when any target is missed."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--golden", type=Path, default=GOLDEN_PATH, help=f"Golden questions (default {GOLDEN_PATH})."
        )
        parser.add_argument(
            "--clinician", action="store_true", help=f"Use the clinician question set ({CLINICIAN_PATH.name})."
        )
        parser.add_argument(
            "--split", choices=["dev", "held_out"], help="Only the questions of this split of the clinician set."
        )
        parser.add_argument("--limit", type=int, help="Only the first N questions.")
        parser.add_argument("--scenario", help="Only questions of this scenario (e.g. mrd_oncology, hfpef_ckd).")
        parser.add_argument("--provider", choices=["extractive", "anthropic", "openai"], help="Override LLM_PROVIDER.")
        parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")
        parser.add_argument(
            "--skip-stored-abstracts",
            action="store_true",
            help="Do not load the PubMedQA abstracts the golden file lists (they must already be stored).",
        )
        defaults = Targets()
        for name, default, what in [
            ("coverage", defaults.coverage, "citation coverage"),
            ("relevance", defaults.relevance, "relevance precision"),
            ("abstention", defaults.abstention, "share of must-abstain questions that abstain"),
            ("first-sentence", defaults.first_sentence, "share of first sentences that state what is required"),
        ]:
            parser.add_argument(
                f"--min-{name}", type=float, default=default, help=f"Target {what} (default {default})."
            )
        parser.add_argument(
            "--max-false-abstentions",
            type=int,
            default=defaults.false_abstentions,
            help=f"Most abstentions allowed on questions the evidence answers (default {defaults.false_abstentions}).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            golden = load_golden_set(CLINICIAN_PATH if options["clinician"] else options["golden"])
        except GoldenError as exc:
            raise CommandError(str(exc)) from exc
        targets = Targets(
            coverage=options["min_coverage"],
            relevance=options["min_relevance"],
            abstention=options["min_abstention"],
            first_sentence=options["min_first_sentence"],
            false_abstentions=options["max_false_abstentions"],
        )
        for name in ("coverage", "relevance", "abstention", "first_sentence"):
            if not 0.0 <= getattr(targets, name) <= 1.0:
                raise CommandError(f"--min-{name.replace('_', '-')} must be between 0 and 1.")
        if targets.false_abstentions < 0:
            raise CommandError("--max-false-abstentions must be 0 or more.")
        questions = golden.questions
        if options["split"]:
            # A follow-up keeps its conversation: the earlier questions are asked whatever their split.
            questions = [question for question in questions if question.split == options["split"]]
            if not questions:
                raise CommandError(f"No question of this set is in split {options['split']!r}.")
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

        if golden.stored_abstracts and not options["skip_stored_abstracts"]:
            try:
                stored = store_pubmedqa(set(golden.stored_abstracts.pmids))
            except FileNotFoundError as exc:
                raise CommandError(f"{exc} Or pass --skip-stored-abstracts.") from exc
            if not options["json"]:
                self.stdout.write(f"Stored {stored} PubMedQA abstracts the golden questions need.")

        def progress(score: QuestionScore) -> None:
            if options["json"]:
                return
            marks = (
                f"{len(score.expected_cited)}/{len(score.expected)} cited, {len(score.expected_retrieved)} retrieved, "
                f"{score.relevant_references}/{len(score.reference_ids)} references on topic"
                + (f", OFF-TOPIC: {', '.join(score.forbidden_cited)}" if score.forbidden_cited else "")
            )
            if score.first_sentence_unmet:
                marks += f", FIRST SENTENCE does not state: {'; '.join(score.first_sentence_unmet)}"
            if score.listed_missing:
                marks += f", LISTED AS MISSING: {', '.join(score.listed_missing)}"
            if score.false_abstention:
                marks += ", FALSE ABSTENTION"
            self.stdout.write(
                f"{score.id:<10} {score.confidence:<6} {'abstained ' if score.abstained else ''}{marks}"
                f"{'  FABRICATED: ' + ', '.join(score.fabricated) if score.fabricated else ''}  ({score.seconds:.2f} s)"
            )

        summary = evaluate(questions=questions, settings=settings, progress=progress, conversations=golden.questions)
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
            self.stdout.write(
                f"Relevance precision: {summary.relevant_references}/{summary.judged_references} references address "
                f"the question ({summary.relevance_precision:.1%}); off-topic references cited: "
                f"{len(summary.forbidden_cited)}"
            )
            self.stdout.write(f"Confidence: GREEN {counts['GREEN']} · YELLOW {counts['YELLOW']} · RED {counts['RED']}")
            self.stdout.write(
                f"Abstention rate: {summary.abstained}/{summary.questions} ({summary.abstention_rate:.1%}); "
                f"abstained where expected: {summary.abstained_when_expected}/{summary.expected_abstentions}; "
                f"GREEN where abstention expected: {summary.green_when_abstention_expected}"
            )
            self.stdout.write(f"Fabricated identifiers shown: {len(summary.fabricated)}")
            self.stdout.write(
                f"False abstentions: {len(summary.false_abstentions)}"
                + (f" ({', '.join(summary.false_abstentions)})" if summary.false_abstentions else "")
            )
            self.stdout.write(
                f"First sentence states what was asked: {summary.first_sentence_answered}/"
                f"{summary.first_sentence_asked} ({summary.first_sentence_rate:.1%}); question words listed as "
                f"not covered: {len(summary.gap_errors)}"
            )
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
        missed = summary.shortfalls(targets)
        if missed:
            raise CommandError("Targets missed: " + "; ".join(missed) + ".")
