"""Tablizer snapshots: saved searches (query, date range, PubMed count, loaded PMIDs) and compare mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from config.inputs import check_no_nul
from pubmed.models import TablizerSnapshot
from pubmed.services.tablizer import tablizer_search

LABEL_MAX_CHARS = 120
MAX_SNAPSHOTS = 200


@dataclass(frozen=True)
class Comparison:
    """Two snapshots side by side: PMIDs only in A, only in B, and in both (each in its snapshot's order)."""

    a: TablizerSnapshot
    b: TablizerSnapshot
    only_a: list[str]
    only_b: list[str]
    both: list[str]


def compare_pmids(*, a: Sequence[str], b: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """Return (only in a, only in b, in both): a's order for the first and last, b's for the second, no repeats."""
    in_a, in_b = set(a), set(b)
    only_a = list(dict.fromkeys(pmid for pmid in a if pmid not in in_b))
    only_b = list(dict.fromkeys(pmid for pmid in b if pmid not in in_a))
    both = list(dict.fromkeys(pmid for pmid in a if pmid in in_b))
    return only_a, only_b, both


def snapshots_compare(*, a: TablizerSnapshot, b: TablizerSnapshot) -> Comparison:
    only_a, only_b, both = compare_pmids(a=a.pmids, b=b.pmids)
    return Comparison(a=a, b=b, only_a=only_a, only_b=only_b, both=both)


def check_snapshot_label(*, label: Any) -> str:
    label = " ".join(label.split()) if isinstance(label, str) else ""
    if not label:
        raise ValidationError("Give the snapshot a label, e.g. Before adding the RCT filter.", code="blank")
    check_no_nul(label, field="The label")
    if len(label) > LABEL_MAX_CHARS:
        raise ValidationError(
            f"The label is {len(label)} characters long; keep it to {LABEL_MAX_CHARS}.", code="max_length"
        )
    return label


def snapshot_save(
    *, user: Any, label: Any, query: str, year_from: int | None, year_to: int | None, rows: int
) -> TablizerSnapshot:
    """Save the search as the Tablizer shows it: PubMed's count and the PMIDs loaded (read from the search cache)."""
    label = check_snapshot_label(label=label)
    if TablizerSnapshot.objects.filter(user=user).count() >= MAX_SNAPSHOTS:
        raise ValidationError(f"You have {MAX_SNAPSHOTS} snapshots, the most kept; delete some first.", code="too_many")
    # A snapshot records what PubMed matched; the local store is no stand-in for it.
    result = tablizer_search(query=query, year_from=year_from, year_to=year_to, rows=rows, local_fallback=False)
    with transaction.atomic():
        return TablizerSnapshot.objects.create(
            user=user,
            label=label,
            query=result.query,
            year_from=year_from,
            year_to=year_to,
            count=result.count,
            pmids=[abstract.pmid for abstract in result.rows],
        )


def snapshot_delete(*, snapshot: TablizerSnapshot) -> None:
    snapshot.delete()
