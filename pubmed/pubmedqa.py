"""The PubMedQA corpus (../shared/data/pubmedqa): its abstracts as records, and storing them for `evaluate`.

The benchmarks (`benchmarks/`) read the same corpus through these functions. Nothing here runs Django
until an abstract is stored, so a script may read the corpus before it sets Django up.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from evidence.sentences import split_sentences
from pubmed.parsers import AbstractRecord, AbstractSection, MeshHeading, render_abstract

BASE_DIR = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("MEDCITE_SHARED_DATA", BASE_DIR.parent / "shared" / "data"))


@dataclass(frozen=True)
class QaItem:
    pmid: str
    question: str
    year: int | None
    meshes: list[str]


def pubmedqa_records(path: Path | None = None) -> tuple[list[AbstractRecord], list[QaItem]]:
    """Return (AbstractRecord per PubMedQA abstract, question per abstract) from ori_pqal.json.

    The corpus text is the labelled CONTEXTS only: PubMedQA has no titles (its question is usually
    the title), and LONG_ANSWER is the answer, so neither is indexed.
    """
    path = path or SHARED_DATA / "pubmedqa" / "ori_pqal.json"
    data = json.loads(path.read_text())
    records, questions = [], []
    for pmid, item in data.items():
        labels = item.get("LABELS") or [""] * len(item["CONTEXTS"])
        sections = [
            AbstractSection(label=label or "", text=" ".join(text.split()))
            for label, text in zip(labels, item["CONTEXTS"], strict=True)
        ]
        year = int(item["YEAR"]) if str(item.get("YEAR", "")).isdigit() else None
        records.append(
            AbstractRecord(
                pmid=pmid,
                title="",
                abstract=render_abstract(sections),
                sections=sections,
                year=year,
                pub_date_raw=str(year or ""),
                mesh_terms=list(item.get("MESHES", [])),
                mesh_headings=[MeshHeading(descriptor=term) for term in item.get("MESHES", [])],
            )
        )
        questions.append(QaItem(pmid=pmid, question=item["QUESTION"], year=year, meshes=list(item.get("MESHES", []))))
    return records, questions


def pubmedqa_titled(records: list[AbstractRecord]) -> list[AbstractRecord]:
    """Return PubMedQA records with each abstract's own first sentence as its title.

    The question must never be an abstract's title (it usually is one in PubMed), or finding the
    abstract would be trivial.
    """
    return [replace(record, title=(split_sentences(record.sections[0].text) or [""])[0][:300]) for record in records]


def store_pubmedqa(pmids: set[str] | frozenset[str]) -> int:
    """Store (insert or update, never delete) the PubMedQA abstracts with these PMIDs; return how many.

    Raises FileNotFoundError naming the corpus file when ../shared/data is not beside the checkout.
    """
    from pubmed.services.lexemes import lexeme_stats_refresh  # needs Django set up
    from pubmed.services.store import abstracts_upsert

    path = SHARED_DATA / "pubmedqa" / "ori_pqal.json"
    if not path.is_file():
        raise FileNotFoundError(f"PubMedQA corpus not found at {path}; clone the project with ../shared beside it.")
    records, _ = pubmedqa_records(path)
    chosen = pubmedqa_titled([record for record in records if record.pmid in pmids])
    for start in range(0, len(chosen), 200):
        abstracts_upsert(records=chosen[start : start + 200], embed=True)
    lexeme_stats_refresh()
    return len(chosen)
