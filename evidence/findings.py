"""A library study's curated findings as evidence: the one place their citable wording is made.

The answer quotes a finding as `shown` ("DOACs are preferred over warfarin ... (Class 1, LOE A)."), the
claim checker reads the same words in the study's citable text, and the reader sees beside it who
vouched for it (`review`). A study without findings is cited by its key finding, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evidence.models import Finding, Study


@dataclass(frozen=True)
class CuratedFinding:
    """A finding as an answer cites it."""

    shown: str
    review: str
    reviewed: bool
    locator: str
    source_url: str
    decision_tags: tuple[str, ...] = ()
    # Set by the judge step: the finding is about a sibling population of the question's ("HFrEF" for an
    # HFpEF question), so it is not offered as an answer to it.
    other_population: bool = False
    # Set by the judge step: the finding is stated for a narrower group than the question's condition (subclinical
    # AF for an AF question); it may answer, but one stated for the condition itself leads before it.
    narrower_population: bool = False
    # Set when the answer reads the library: the kind of answer each decision tag asks for (`Tag.answer_kind`,
    # "" for none), in the order of `decision_tags`.
    answer_kinds: tuple[str, ...] = ()


def decisions_tagged(findings: Iterable[CuratedFinding]) -> frozenset[str]:
    """Return the decision tags the curators gave `findings`: a decision among them is addressed by them, in
    whatever words ("prognosis?" by a finding on recurrence tagged risk stratification)."""
    return frozenset(tag for finding in findings for tag in finding.decision_tags)


def shown_statement(finding: Finding) -> str:
    """Return the finding's statement with its grade, as one sentence: "... (Class 1, LOE A)."

    A statement that writes its grade itself is shown as written: one that covers two recommendations puts
    each grade beside its own ("... SGLT2 inhibitor is a reasonable choice (Class 2a); MRAs ... (Class 2b).").
    """
    statement = " ".join(finding.statement.split())
    grade = finding.grade
    if not grade or (finding.recommendation_class and f"({finding.recommendation_class}" in statement):
        return statement if statement.endswith((".", "!", "?")) else statement + "."
    return f"{statement.rstrip('.')} ({grade})."


def curated_findings(study: Study) -> tuple[CuratedFinding, ...]:
    """Return the study's findings in order (prefetch `findings` with `evidence.selectors.with_findings`)."""
    return tuple(
        CuratedFinding(
            shown=shown_statement(finding),
            review=finding.review_words(),
            reviewed=finding.is_reviewed,
            locator=finding.locator,
            source_url=finding.source_url,
            decision_tags=tuple(finding.decision_tags),
        )
        for finding in study.findings.all()
    )


def citable_text(study: Study, findings: tuple[CuratedFinding, ...] | None = None) -> str:
    """Return what a citation of the study may quote: each finding as shown, one per line, then its key finding."""
    findings = curated_findings(study) if findings is None else findings
    return "\n".join([*(finding.shown for finding in findings), study.key_finding])
