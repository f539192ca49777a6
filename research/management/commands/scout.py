"""`manage.py scout DRUG DISEASE [--profile FILE.json] [--max-pmids N] [--json]`: one Evidence Scout run."""

from __future__ import annotations

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from pubmed.clients import EutilsUnavailable
from research.scout.pipeline import scout_run_execute
from research.scout.runs import check_scout_input, scout_run_create, scout_run_fail


class Command(BaseCommand):
    help = (
        "Evidence Scout: normalise the disease, expand drug x disease into PubMed queries, fetch and cache "
        "the abstracts, search them semantically, rerank 20 to 5 and print an EvidenceSummary whose every "
        "finding cites one of the five. --json prints the summary fields, the queries run and stage timings."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("drug", help="Drug name, e.g. gefitinib.")
        parser.add_argument("disease", help='Disease name, e.g. "non-small cell lung cancer" (quote it).')
        parser.add_argument(
            "--profile", type=Path, metavar="FILE.json",
            help="JSON file with the drug profile: synonyms, targets, mechanisms, atc_codes, atc_descriptions, "
                 "drug_type.",
        )
        parser.add_argument(
            "--max-pmids", type=int, metavar="N",
            help="Most PMIDs fetched per query (default and ceiling: SCOUT_MAX_PMIDS_PER_QUERY, 500).",
        )
        parser.add_argument("--json", action="store_true", help="Print the result document as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        profile: Any = None
        if options["profile"] is not None:
            try:
                profile = options["profile"].read_text()
            except OSError as exc:
                raise CommandError(f"Cannot read the profile file {options['profile']}: {exc.strerror}.") from exc
        try:
            cleaned = check_scout_input(
                drug=options["drug"], disease=options["disease"], profile=profile, max_pmids=options["max_pmids"]
            )
        except ValidationError as exc:
            raise CommandError(" ".join(f"{field}: {'; '.join(messages)}"
                                        for field, messages in exc.message_dict.items())) from exc
        run = scout_run_create(user=None, enqueue=False, **cleaned)
        if not options["json"]:
            self.stderr.write(f"Scout run {run.pk}: {cleaned['drug']} / {cleaned['disease']}")
        try:
            run = scout_run_execute(run_id=str(run.pk))
        except EutilsUnavailable as exc:
            scout_run_fail(run_id=str(run.pk), message=str(exc))
            raise CommandError(f"NCBI E-utilities could not be reached: {exc.__cause__ or exc}") from exc
        except Exception as exc:
            raise CommandError(f"The scout run failed: {type(exc).__name__}: {exc}") from exc
        result = run.result or {}
        if options["json"]:
            self.stdout.write(json.dumps({"id": str(run.pk), **result}, indent=2, ensure_ascii=False))
            return
        self._print(result)

    def _print(self, result: dict[str, Any]) -> None:
        disease = result["disease"]
        asked = f" (asked: {disease['original']})" if disease["original"] != disease["normalised"] else ""
        self.stdout.write(f"{result['drug']} for {disease['normalised']}{asked}")
        self.stdout.write(f"Queries ({result['expansion']}):")
        for query in result["queries"]:
            self.stdout.write(f"  [{query['axis']}] {query['query']}  -> {query['pmids_found']} PMIDs")
        self.stdout.write(f"{result['pmid_count']} PMIDs; reranker: {result['reranker']}; "
                          f"synthesis: {result['synthesis']}")
        self.stdout.write("")
        self.stdout.write(result["summary"])
        for finding in result["key_findings"]:
            self.stdout.write(f"- {finding['text']} [PMID {', '.join(finding['pmids'])}]")
        self.stdout.write("\nCited abstracts")
        for item in result["top5"]:
            self.stdout.write(f"  PMID {item['pmid']} ({item['study_type']}, {item['year'] or 'n.d.'}): "
                              f"{item['title']} {item['url']}")
        timings = ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in result["timings"].items() if seconds)
        self.stdout.write(f"\nStage timings: {timings}")
