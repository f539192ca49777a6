"""Full-text and vector search variants, timed side by side on a kept store of `benchmarks/ingest.py`.

Every variant runs on the same store, question by question in turn (so machine load hits all
alike), and is judged by what hybrid search returns with it: the question's own abstract among
the synthetic ones (Recall@10, MRR@10 after fusion and the lexical rerank, as shipped). Reported
per variant: SQL latency p50/p95, PostgreSQL CPU per query (moves little with the machine's load),
and for full-text the number of chunks ranked.

Full-text variants (vector side as shipped):
- `or-rarest`: the previous shipped query: candidates hold any of the rarest query lexemes within
  FTS_CANDIDATE_BUDGET by estimate, the rarest always taken; every candidate ranked.
- `and-first`: candidates hold every query lexeme; when fewer than the ranking depth do,
  `or-rarest` instead.
- `shipped`: `pubmed.services.search.text_ranking` — pairs of the rarest lexemes when even the
  rarest is over budget, never more than FTS_CANDIDATE_LIMIT ranked; with budgets 300 to 2,000,
  with a limit of 2,000 instead of 4,000,
  and once with the capped candidates taken from the table's end (a quality check: the stores
  hold the real abstracts first, so a binding cap, which keeps the first matches, always keeps them).
Vector variants (full-text as shipped): HNSW ef_search 60 (the ranking depth, the least that returns
60 rows), 100 (shipped before), 200 (shipped).

The store must exist: run `benchmarks/ingest.py --skip-ingest --sizes N` first.

    .venv/bin/python benchmarks/search_variants.py --size 1000000 [--queries 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import load_summary, pubmedqa_records, setup_django

Ranking = list[tuple[int, str, float]]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def _backend_cpu_seconds() -> float:
    import os

    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ranked_text(
    candidates: str, every_word: str, *, cap: int | None, limit: int, cap_from_end: bool = False
) -> tuple[Ranking, int]:
    """Rank the chunks matching tsquery `candidates` by ts_rank of `every_word`; return (ranking, ranked).

    `cap_from_end` takes the capped candidates from the end of the table instead of its start.
    """
    from django.db import connection, transaction

    cap_sql = f"LIMIT {int(cap)}" if cap else ""
    if cap and cap_from_end:
        cap_sql = f"ORDER BY c.ctid DESC {cap_sql}"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL random_page_cost = 1.1")
        cursor.execute(
            "WITH candidate AS MATERIALIZED (SELECT c.id, c.abstract_id, c.search_vector FROM pubmed_abstractchunk c "
            f"WHERE c.search_vector @@ %s::tsquery {cap_sql}) "
            "SELECT id, abstract_id, ts_rank('{0.1, 0.2, 0.4, 1.0}', search_vector, %s::tsquery, 1) AS rank, "
            "count(*) OVER () FROM candidate ORDER BY rank DESC, id LIMIT %s",
            [candidates, every_word, limit],
        )
        rows = cursor.fetchall()
    return [(chunk_id, pmid, float(rank)) for chunk_id, pmid, rank, _ in rows], (rows[0][3] if rows else 0)


def _or_rarest(lexemes: list[tuple[str, float]], total: int) -> str:
    from pubmed.services import search

    chosen: list[str] = []
    estimate = 0.0
    for lexeme, share in sorted(lexemes, key=lambda item: (item[1], item[0])):
        if chosen and estimate + share * total > search.FTS_CANDIDATE_BUDGET:
            break
        chosen.append(lexeme)
        estimate += share * total
    return " | ".join(search._quoted(lexeme) for lexeme in chosen)


def _text_variants() -> dict[str, Callable[[str, int], tuple[Ranking, int]]]:
    from pubmed.services import search

    def words(lexemes: list[tuple[str, float]], joiner: str) -> str:
        return joiner.join(search._quoted(lexeme) for lexeme, _ in lexemes)

    def or_rarest(query: str, limit: int) -> tuple[Ranking, int]:
        lexemes, total = search.query_lexemes(query)
        return _ranked_text(_or_rarest(lexemes, total), words(lexemes, " | "), cap=None, limit=limit)

    def and_first(query: str, limit: int) -> tuple[Ranking, int]:
        lexemes, total = search.query_lexemes(query)
        ranking, ranked = _ranked_text(words(lexemes, " & "), words(lexemes, " | "), cap=None, limit=limit)
        if len(ranking) >= limit:
            return ranking, ranked
        fallback, more = _ranked_text(_or_rarest(lexemes, total), words(lexemes, " | "), cap=None, limit=limit)
        return fallback, ranked + more

    shipped_cap = search.FTS_CANDIDATE_LIMIT

    def shipped(
        budget: int, *, cap: int = shipped_cap, cap_from_end: bool = False
    ) -> Callable[[str, int], tuple[Ranking, int]]:
        def run(query: str, limit: int) -> tuple[Ranking, int]:
            search.FTS_CANDIDATE_BUDGET = budget
            lexemes, total = search.query_lexemes(query)
            return _ranked_text(
                search.candidate_tsquery(lexemes, total=total), words(lexemes, " | "),
                cap=cap, limit=limit, cap_from_end=cap_from_end,
            )

        return run

    return {
        "or-rarest (before)": or_rarest,
        "and-first, or-rarest fallback": and_first,
        "shipped, budget 300": shipped(300),
        "shipped, budget 500": shipped(500),
        "shipped, budget 1000": shipped(1000),
        "shipped, budget 2000": shipped(2000),
        "shipped, budget 1000, limit 2000": shipped(1000, cap=2000),
        # Quality check, not a speed variant: the stores hold the real abstracts at the start of the
        # table, so a binding cap (which keeps the first matches in table order) always keeps them.
        "shipped, budget 1000, capped candidates from the table's end": shipped(1000, cap_from_end=True),
    }


def _measure(questions: list, variants: dict[str, Callable[[str], tuple[Ranking, Ranking, int]]]) -> None:
    """Run every variant on each question in turn; print latency, CPU, ranked chunks and quality."""
    from pubmed.services import search
    from pubmed.services.rerank import rerank_hits

    stats: dict[str, dict[str, list[float]]] = {
        name: {"ms": [], "cpu": [], "ranked": [], "rr": []} for name in variants
    }
    for q in questions[:10]:  # warm-up
        for run in variants.values():
            run(q.question)
    for q in questions:
        for name, run in variants.items():
            backend = _backend_cpu_seconds()
            started = time.perf_counter()
            vector, text, ranked = run(q.question)
            stats[name]["ms"].append((time.perf_counter() - started) * 1000)
            stats[name]["cpu"].append((_backend_cpu_seconds() - backend) * 1000)
            stats[name]["ranked"].append(ranked)
            fused = search.fuse_scores(search._best_scores(vector), search._best_scores(text))
            hits = rerank_hits(query=q.question, hits=search._hits(fused[: search.RERANK_DEPTH]), k=10).hits
            pmids = [hit.pmid for hit in hits]
            stats[name]["rr"].append(1 / (pmids.index(q.pmid) + 1) if q.pmid in pmids else 0.0)
    print("| variant | SQL p50 ms | SQL p95 ms | PostgreSQL CPU ms/query | chunks ranked p50 / p95 / max | "
          "hybrid Recall@10 | MRR@10 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, s in stats.items():
        ranked = s["ranked"]
        recall = sum(1 for rr in s["rr"] if rr > 0) / len(s["rr"])
        print(
            f"| {name} | {statistics.median(s['ms']):.1f} | {_percentile(s['ms'], 0.95):.1f} | "
            f"{statistics.mean(s['cpu']):.1f} | {statistics.median(ranked):.0f} / {_percentile(ranked, 0.95):.0f} / "
            f"{max(ranked):.0f} | {recall:.3f} | {statistics.mean(s['rr']):.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, required=True, help="the kept store to use (a size ingest.py filled)")
    parser.add_argument("--queries", type=int, default=200, help="PubMedQA questions per variant (default 200)")
    parser.add_argument("--only", choices=["text", "vector"], help="only the full-text or only the vector variants")
    parser.add_argument("--text-variants", help="full-text variants to run, separated by ';' (default all)")
    args = parser.parse_args()
    setup_django(database=f"medcite_bench_search_{args.size}")

    from django.conf import settings

    from pubmed.models import Abstract
    from pubmed.services import search

    settings.EMBEDDING_BACKEND = "onnx-int8"
    stored = Abstract.objects.count()
    if stored != args.size:
        raise SystemExit(
            f"medcite_bench_search_{args.size} holds {stored:,} abstracts, not {args.size:,}: fill it first with "
            f"`benchmarks/ingest.py --skip-ingest --sizes {args.size}`."
        )
    _, questions = pubmedqa_records()
    questions = questions[: args.queries]
    depth = search.CANDIDATES
    print(f"{stored:,} abstracts, {len(questions)} questions; start: {load_summary()}")
    vectors = {q.question: search.vector_ranking(query=q.question, limit=depth) for q in questions}
    texts = {q.question: search.text_ranking(query=q.question, limit=depth) for q in questions}

    if args.only != "vector":
        text_variants: dict[str, Callable[[str], tuple[Ranking, Ranking, int]]] = {
            name: (lambda query, run=run: (vectors[query], *run(query, depth)))
            for name, run in _text_variants().items()
            if not args.text_variants or name in args.text_variants.split(";")
        }
        print("\nFull-text variants (vector ranking as shipped; SQL time is the full-text query's):")
        _measure(questions, text_variants)
        search.FTS_CANDIDATE_BUDGET = 1000
    if args.only != "text":
        def with_ef(ef: int) -> Callable[[str], tuple[Ranking, Ranking, int]]:
            def run(query: str) -> tuple[Ranking, Ranking, int]:
                search.HNSW_EF_SEARCH = ef
                return search.vector_ranking(query=query, limit=depth), texts[query], 0

            return run

        print(
            "\nVector variants (full-text ranking as shipped; the first pass cached the query embeddings, "
            "so SQL time is the vector query's):"
        )
        _measure(questions, {f"ef_search {ef}": with_ef(ef) for ef in (60, 100, 200)})
    print(f"\nfinished: {load_summary()}")


if __name__ == "__main__":
    main()
