"""`manage.py verify_claims FILE [--json]`: judge claims against given passages or PMIDs, one JSON line each."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evidence.claims import ClaimVerdict, PassageCache, PassageText
from evidence.identifiers import is_pmid
from evidence.services.citation_check import claim_verdict
from evidence.services.cited_sources import Resolution, cited_sources_resolve

HELP = """Judge claims against the passages (or PubMed records) they cite.

FILE holds JSON lines {"id": any, "claim": str, "passages": [{"id": str, "text": str}]}, or
"pmids": ["35657320", ...] instead of (or beside) "passages": stored abstracts, fetched from PubMed
and stored when missing, as the citation checker resolves them. FILE may be - for standard input.
Blank lines are skipped. Every line is read and checked before any is judged: a malformed line
(bad JSON, no claim, passages not a list of {id, text}, PMIDs that are not PMIDs, neither passages
nor pmids) prints a message naming its line number on standard error and exits with status 2.

With --json, one JSON line per input line, in order: {"id", "verdict": "supported" | "contradicted"
| "not_enough_info", "supported", "score", "quotes": [{"passage", "text"}], "reason"}, where
quotes[].passage is the passage id (the PMID for pmids). Without it, a readable table."""


@dataclass(frozen=True)
class ClaimLine:
    """One input line: where it was, its id, the claim, the passages given and the PMIDs to resolve."""

    number: int
    id: Any
    claim: str
    passages: list[PassageText]
    pmids: list[str]


def _malformed(number: int, problem: str) -> CommandError:
    return CommandError(f"line {number}: {problem}", returncode=2)


def _passages(number: int, value: Any) -> list[PassageText]:
    if not isinstance(value, list):
        raise _malformed(number, '"passages" must be a list of {"id": str, "text": str} objects.')
    passages = []
    for index, item in enumerate(value):
        if not (isinstance(item, dict) and isinstance(item.get("id"), str | int) and not isinstance(item["id"], bool)
                and isinstance(item.get("text"), str)):
            raise _malformed(number, f'passages[{index}] must be an object {{"id": str, "text": str}}.')
        passages.append(PassageText(doc_id=str(item["id"]), chunk_id="text", text=item["text"]))
    return passages


def _pmids(number: int, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise _malformed(number, '"pmids" must be a list of PMIDs, e.g. ["35657320"].')
    pmids = [str(item).strip() if isinstance(item, str | int) and not isinstance(item, bool) else "" for item in value]
    bad = [repr(item) for item, pmid in zip(value, pmids, strict=True) if not is_pmid(pmid)]
    if bad:
        raise _malformed(number, f"not PMIDs: {', '.join(bad)}; a PMID is digits only, e.g. 35657320.")
    return pmids


def parse_claim_lines(stream: TextIO) -> list[ClaimLine]:
    """Return every non-blank line of `stream` as a ClaimLine; raise CommandError (status 2) at the first bad one."""
    lines = []
    for number, raw in enumerate(stream, start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _malformed(number, f"not valid JSON ({exc.msg} at column {exc.colno}).") from exc
        if not isinstance(item, dict):
            raise _malformed(number, 'each line must be a JSON object {"id", "claim", "passages" or "pmids"}.')
        claim = item.get("claim")
        if not isinstance(claim, str) or not claim.strip():
            raise _malformed(number, '"claim" is missing or not a non-empty string.')
        if "passages" not in item and "pmids" not in item:
            raise _malformed(number, 'give "passages" ([{"id", "text"}]) or "pmids" (["35657320", ...]).')
        passages = _passages(number, item["passages"]) if "passages" in item else []
        pmids = _pmids(number, item["pmids"]) if "pmids" in item else []
        lines.append(ClaimLine(number, item.get("id"), claim, passages, pmids))
    return lines


def _pmid_passages(line: ClaimLine, resolution: Resolution) -> tuple[list[PassageText], list[str]]:
    """Return the passages of the line's PMIDs, labelled by PMID, and a note for each PMID without text."""
    passages: list[PassageText] = []
    notes: list[str] = []
    for pmid in dict.fromkeys(line.pmids):
        source = resolution.found.get(("pmid", pmid))
        if source is not None:
            passages.extend(PassageText(doc_id=pmid, chunk_id=p.chunk_id, text=p.text) for p in source.passages)
        elif ("pmid", pmid) in resolution.unavailable:
            notes.append(f"PMID {pmid} could not be fetched from PubMed")
        else:
            notes.append(f"PMID {pmid} is not found in PubMed or the library")
    return passages, notes


def verdict_document(line: ClaimLine, verdict: ClaimVerdict, notes: list[str]) -> dict[str, Any]:
    """Return the output line of the `verify_claims` contract for one judged input line."""
    reason = "; ".join(part for part in [*notes, verdict.reason] if part)
    return {
        "id": line.id,
        "verdict": verdict.verdict,
        "supported": verdict.supported,
        "score": float(verdict.score),
        "quotes": [{"passage": quote.doc_id, "text": quote.quote} for quote in verdict.support],
        "reason": reason,
    }


class Command(BaseCommand):
    help = HELP

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        from argparse import RawDescriptionHelpFormatter

        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = RawDescriptionHelpFormatter
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="JSON lines to judge; - for standard input")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="print one JSON line per input line (the contract above)")

    def handle(self, *args: Any, file: str, as_json: bool, **options: Any) -> None:
        if file == "-":
            lines = parse_claim_lines(sys.stdin)
        else:
            try:
                with Path(file).open(encoding="utf-8") as stream:
                    lines = parse_claim_lines(stream)
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"Cannot read {file}: {exc}", returncode=2) from exc
        resolution = cited_sources_resolve(keys=[("pmid", pmid) for line in lines for pmid in line.pmids])
        cache = PassageCache()
        for line in lines:
            from_pmids, notes = _pmid_passages(line, resolution)
            passages = line.passages + from_pmids
            verdict = claim_verdict(line.claim, passages, cache=cache)
            document = verdict_document(line, verdict, notes)
            if as_json:
                self.stdout.write(json.dumps(document, ensure_ascii=False))
                continue
            quotes = document["quotes"]
            quote = f' "{quotes[0]["text"]}" ({quotes[0]["passage"]})' if quotes else ""
            self.stdout.write(
                f"{line.number:>4}  {str(line.id)[:12]:<12}  {verdict.verdict:<15}  {verdict.score:5.2f}  "
                f"{line.claim[:60]}{quote}" + (f" — {document['reason']}" if document["reason"] else "")
            )
