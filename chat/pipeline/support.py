"""Step 7a, support: every statement shown must be supported by the source it cites.

The claim checker (`evidence.claims.checker.SupportChecker`) judges each statement of the generated
answer against what it cites and removes what its source does not say; this step builds the checker
for a run (and for the research trays), applies it and records what it removed and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import structlog

from chat.answer_settings import AnswerSettings
from chat.pipeline.state import AnswerRun, TraceStep, plural
from chat.providers import json_completer
from evidence.claims import CONTRADICTED
from evidence.claims.checker import ClaimRecord, SupportChecker, contradiction_notice
from evidence.selectors import abbreviation_terms
from evidence.sources import EvidenceSet
from pubmed.embeddings import embed_cached

logger = structlog.get_logger("medcite.citations")


def claim_checker(
    evidence: EvidenceSet, settings: AnswerSettings, *, known_names: Sequence[str] = (), ask_model: bool = True
) -> SupportChecker:
    """Return the claim checker for `evidence`; the curated abbreviations and `known_names` are never taken
    for unverified study names. `ask_model`: the configured language model also judges the claims."""
    asks_model = ask_model and settings.provider != "extractive" and settings.model_claim_check
    return SupportChecker(
        evidence,
        embed=embed_cached,
        threshold=settings.claim_support_threshold,
        known_names=[*known_names, *abbreviation_terms()],
        complete=json_completer(settings) if asks_model else None,
    )


def checker_for(run: AnswerRun) -> SupportChecker:
    """Return the claim checker for this run's admitted evidence (the library's study names are known)."""
    assert run.evidence is not None
    names = [name for study in run.library for name in (study.study_name, *study.aliases) if name]
    return claim_checker(run.evidence, run.settings, known_names=names)


def check_support(run: AnswerRun) -> TraceStep:
    """Remove unsupported claims and unverified study names from the generated answer; record why."""
    if run.generation is None or run.evidence is None or run.generation.details.get("abstained"):
        return TraceStep("support", "Checked every statement against its source", "No statement to check.", {})
    checker = run.checker
    assert checker is not None  # the runner builds it before the answer is written
    if run.composed_by == "extractive":  # the extractive composer quotes; a failed model is not asked again
        checker.complete = None
    checked = checker.check(run.generation.text)
    text, records, removals = checked.text, checked.records, checked.removals
    notice = contradiction_notice(records)
    if notice:  # a verbatim quote of the cited source, shown as the statement it is
        records.insert(0, ClaimRecord(notice.strip(), [records[0].support[0]["doc_id"]], True, records[0].support))
        text = notice + text
    run.generation = replace(run.generation, text=text)
    run.claims = records
    run.claims_removed = checked.claims_removed
    run.identifiers_removed = checked.identifiers_removed
    for item in run.identifiers_removed:
        logger.warning("citation_hallucinated", intent=run.intent, form=item["form"], identifier=item["value"])
    removed = sum(1 for r in removals if r["kind"] == "claim")
    contradicted = sum(1 for r in removals if r["kind"] == "claim" and r.get("verdict") == CONTRADICTED)
    names_removed = [r["text"] for r in removals if r["kind"] == "study_name"]
    kept = sum(1 for r in records if r.supported)
    return TraceStep(
        "support",
        "Checked every statement against its source",
        f"{plural(kept, 'statement', 'statements')} supported by the cited text; "
        f"{plural(removed, 'statement', 'statements')} removed as unsupported"
        + (f" ({contradicted} contradicted by the source it cites)" if contradicted else "")
        + (f"; study names removed (no verified identifier): {', '.join(names_removed)}" if names_removed else "")
        + (
            f"; {sum(1 for r in records if r.repaired)} uncited statement(s) given the source that says them"
            if any(r.repaired for r in records)
            else ""
        ),
        {"claims": [r.to_dict() for r in records], "removed": removals},
    )
