"""Retrieval quality on PubMedQA: Recall@1/5/10 and MRR@10 for full-text, vector and hybrid search.

Corpus: the 1,000 PubMedQA (PQA-L) abstracts from ../shared/data/pubmedqa/ori_pqal.json (labelled
CONTEXTS only); queries: their 1,000 QUESTIONs; the gold document of a question is its own PMID.
Runs in its own database (`medcite_bench_retrieval`), never the development database.

    .venv/bin/python benchmarks/retrieval.py [--limit N] [--backend onnx-int8|onnx|torch] [--keep]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import load_summary, pubmedqa_records, setup_django


def _metrics(ranked: list[list[str]], gold: list[str]) -> dict[str, float]:
    n = len(gold)
    out = {}
    for cutoff in (1, 5, 10):
        out[f"R@{cutoff}"] = sum(1 for pmids, g in zip(ranked, gold, strict=True) if g in pmids[:cutoff]) / n
    out["MRR@10"] = sum(1 / (pmids.index(g) + 1) for pmids, g in zip(ranked, gold, strict=True) if g in pmids[:10]) / n
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N abstracts/questions")
    parser.add_argument("--backend", default="", help="EMBEDDING_BACKEND to use (default: the setting)")
    parser.add_argument("--keep", action="store_true", help="reuse the stored corpus if already loaded")
    args = parser.parse_args()
    if args.backend:
        import os

        os.environ["EMBEDDING_BACKEND"] = args.backend
    setup_django(database="medcite_bench_retrieval")

    from django.conf import settings

    from pubmed.models import Abstract
    from pubmed.services import search
    from pubmed.services.lexemes import lexeme_stats_refresh
    from pubmed.services.store import abstracts_upsert

    records, questions = pubmedqa_records()
    if args.limit:
        records, questions = records[: args.limit], questions[: args.limit]
    print(f"PubMedQA retrieval benchmark — {len(records)} abstracts, {len(questions)} questions")
    print(f"embedding model {settings.EMBEDDING_MODEL}, backend {settings.EMBEDDING_BACKEND}; {load_summary()}")
    stored = Abstract.objects.filter(pmid__in=[r.pmid for r in records]).count()
    if not (args.keep and stored == len(records)):
        Abstract.objects.all().delete()
        started = time.perf_counter()
        for start in range(0, len(records), 200):
            abstracts_upsert(records=records[start : start + 200], embed=True)
        print(f"loaded and embedded in {time.perf_counter() - started:.1f} s")
    lexeme_stats_refresh()

    gold = [q.pmid for q in questions]

    def rrf(query: str) -> list:
        depth = search.CANDIDATES
        vector = search._best_scores(search.vector_ranking(query=query, limit=depth))
        text = search._best_scores(search.text_ranking(query=query, limit=depth))
        return search._hits(search.fuse_rankings([(vector, 1.0), (text, 1.0)], k=60)[:10])

    methods = {
        "full-text": lambda q: search.fulltext_search(q, 10),
        "vector": lambda q: search.semantic_search(q, 10),
        "hybrid (RRF k=60, equal weights; not shipped)": rrf,
        "hybrid (score fusion)": lambda q: search.hybrid_search(query=q, k=10, rerank=False),
        "hybrid (fusion + rerank)": lambda q: search.hybrid_search(query=q, k=10, rerank=True),
    }
    rows = []
    for name, run in methods.items():
        started = time.perf_counter()
        ranked = [[hit.pmid for hit in run(q.question)] for q in questions]
        elapsed = (time.perf_counter() - started) / len(questions) * 1000
        rows.append((name, _metrics(ranked, gold), elapsed))
    print()
    print("| method | Recall@1 | Recall@5 | Recall@10 | MRR@10 | ms/query |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, m, ms in rows:
        print(f"| {name} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['MRR@10']:.3f} | {ms:.1f} |")
    best_single = max(rows[0][1]["R@10"], rows[1][1]["R@10"])
    best_single_mrr = max(rows[0][1]["MRR@10"], rows[1][1]["MRR@10"])
    hybrid = rows[-1][1]
    verdict = "PASS" if hybrid["R@10"] >= best_single and hybrid["MRR@10"] >= best_single_mrr else "FAIL"
    print(
        f"\nhybrid (as shipped, with rerank) vs best single method: Recall@10 {hybrid['R@10']:.3f} vs "
        f"{best_single:.3f}, MRR@10 {hybrid['MRR@10']:.3f} vs {best_single_mrr:.3f} → {verdict}"
    )
    print(f"finished; {load_summary()}")


if __name__ == "__main__":
    main()
