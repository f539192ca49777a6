"""Ingestion throughput and hybrid-search latency, measured on this machine.

1. Abstracts per second end to end — parse (JSONL file of the 1,000 PubMedQA abstracts), chunk,
   embed, store — for the shipped pipeline (ONNX Runtime, int8, length-sorted token-budget batches,
   `abstracts_upsert_batches`: the next batch embeds while the previous one is written) against the
   naive baseline (sentence-transformers, fp32, default batch size 32, `abstracts_upsert` one batch
   after another) in the same run. Runs go
   A-B-B-A so a change in machine load affects both alike. Recall@10 of vector search over the
   stored chunks is measured for each, so any quality lost to int8 is visible.
2. p50/p95 latency of `hybrid_search` (query embedding + pgvector HNSW + full-text + fusion + rerank)
   with 10k and 100k abstracts stored. Beyond the 1,000 real abstracts the store is filled with
   synthetic ones: text made of sentences sampled from the real corpus, vectors made from real
   chunk vectors plus noise.

Uses its own database (`medcite_bench_ingest`), never the development database.

    .venv/bin/python benchmarks/ingest.py [--limit N] [--rounds 1|2] [--sizes 10000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pubmed.benchmarking import load_summary, pubmedqa_records, setup_django

SYNTHETIC_PMID_START = 90_000_000


def _write_jsonl(records: list, path: Path) -> None:
    with path.open("w") as handle:
        for record in records:
            handle.write(
                json.dumps(
                    {
                        "pmid": record.pmid,
                        "title": record.title,
                        "abstract": record.abstract,
                        "pub_date": record.pub_date_raw,
                        "mesh_terms": record.mesh_terms,
                    }
                )
                + "\n"
            )


def _backend_cpu_seconds() -> float:
    """CPU seconds used so far by this connection's PostgreSQL backend (0 if not readable)."""
    import os

    from django.db import connection

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


# Both pipelines store through `pubmed.services.store` in batches of this many records.
INGEST_BATCH = 200

PIPELINES = {
    "naive": "naive: sentence-transformers fp32, batch 32, batches one after another",
    "shipped": "shipped: ONNX Runtime int8, token-budget batches, embedding overlapped with writing",
}


def _ingest(path: Path, *, pipeline: str) -> tuple[float, int, int, float]:
    """Parse the file and store it with `pipeline`; return (wall s, abstracts, chunks, CPU s).

    CPU seconds are this process's (all threads) plus its PostgreSQL backend's: unlike wall time
    they barely change when other programs load the shared machine.
    """
    from django.conf import settings
    from django.db import connection

    from pubmed.embeddings import get_embedder
    from pubmed.parsers import parse_file
    from pubmed.services.store import abstracts_upsert, abstracts_upsert_batches

    # The baseline is sentence-transformers as shipped: fp32, its default batch size of 32.
    settings.EMBEDDING_BACKEND = "torch" if pipeline == "naive" else "onnx-int8"
    settings.EMBEDDING_BATCH_SIZE = 32 if pipeline == "naive" else 64
    get_embedder().embed(["warm-up"])  # model loading is not ingestion
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE pubmed_abstractchunk, pubmed_abstract")
    started, cpu_started, backend_started = time.perf_counter(), time.process_time(), _backend_cpu_seconds()
    records = parse_file(path)
    batches = [records[start : start + INGEST_BATCH] for start in range(0, len(records), INGEST_BATCH)]
    if pipeline == "naive":
        embedded = sum(abstracts_upsert(records=batch, source="jsonl").embedded for batch in batches)
    else:
        embedded = sum(result.embedded for result in abstracts_upsert_batches(batches=batches, source="jsonl"))
    cpu = time.process_time() - cpu_started + _backend_cpu_seconds() - backend_started
    return time.perf_counter() - started, len(records), embedded, cpu


def _recall_at_10(questions: list) -> float:
    from pubmed.services.search import semantic_search

    hits = sum(1 for q in questions if q.pmid in [h.pmid for h in semantic_search(q.question, 10)])
    return hits / len(questions)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _fill_synthetic(*, target: int, sentences: list[str], rng: random.Random) -> float:
    """Add synthetic abstracts (one chunk each) until `target` are stored; return seconds taken."""
    import numpy as np
    from django.db import connection

    from pubmed.embeddings import current_model_name, get_embedder
    from pubmed.models import Abstract, AbstractChunk
    from pubmed.services.store import lexeme_stats_refresh

    have = Abstract.objects.count()
    if have >= target:
        return 0.0
    started = time.perf_counter()
    dimension = get_embedder().spec.dimension
    real = np.array(
        [
            list(v)
            for v in AbstractChunk.objects.filter(abstract_id__lt=str(SYNTHETIC_PMID_START)).values_list(
                "embedding", flat=True
            )[:5000]
        ],
        dtype=np.float32,
    )
    model = current_model_name()
    synthetic = Abstract.objects.filter(pmid__regex=r"^9\d{7}$").order_by("-pmid").values_list("pmid", flat=True)
    next_pmid = max(SYNTHETIC_PMID_START, int(synthetic[0]) + 1 if synthetic else 0)
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX IF EXISTS chunk_embedding_hnsw_384")
        raw = cursor.cursor
        batch = 5000
        while have < target:
            size = min(batch, target - have)
            pmids = [str(next_pmid + i) for i in range(size)]
            next_pmid += size
            texts = [" ".join(rng.sample(sentences, rng.randint(3, 7))) for _ in range(size)]
            base = real[np.array([rng.randrange(len(real)) for _ in range(size)])]
            noise = np.random.default_rng(rng.randrange(2**32)).normal(0, 0.04, size=base.shape).astype(np.float32)
            vectors = base + noise
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            with raw.copy(
                "COPY pubmed_abstract (pmid, title, abstract, sections, authors, journal, journal_title, pub_date_raw,"
                " year, mesh_terms, mesh_major, mesh_headings, publication_types, keywords, doi, pmcid, is_book,"
                " source, content_hash, fetched_at, updated_at) FROM STDIN"
            ) as copy:
                for pmid, text in zip(pmids, texts, strict=True):
                    copy.write_row(
                        [
                            pmid,
                            "",
                            text,
                            "[]",
                            "{}",
                            "Synthetic J",
                            "",
                            "2020",
                            2000 + int(pmid) % 25,
                            "{}",
                            "{}",
                            "[]",
                            "{Journal Article}",
                            "{}",
                            "",
                            "",
                            False,
                            "jsonl",
                            pmid,
                            "2026-01-01T00:00:00Z",
                            "2026-01-01T00:00:00Z",
                        ]
                    )
            with raw.copy(
                "COPY pubmed_abstractchunk (abstract_id, ordinal, section, title, text, embedding, embedding_model,"
                " embedding_dim) FROM STDIN"
            ) as copy:
                for pmid, text, vector in zip(pmids, texts, vectors, strict=True):
                    literal = "[" + ",".join(f"{x:.6f}" for x in vector) + "]"
                    copy.write_row([pmid, 0, "", "", text, literal, model, dimension])
            have += size
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            f"CREATE INDEX chunk_embedding_hnsw_{dimension} ON pubmed_abstractchunk USING hnsw "
            f"((embedding::vector({dimension})) vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
            f"WHERE embedding_dim = {dimension}"
        )
        cursor.execute("ANALYZE pubmed_abstract")
        cursor.execute("ANALYZE pubmed_abstractchunk")
    lexeme_stats_refresh()
    return time.perf_counter() - started


def _latency(questions: list, *, warmup: int = 10) -> dict[str, float]:
    from pubmed.embeddings import embed_query
    from pubmed.services import search

    for q in questions[:warmup]:
        search.hybrid_search(query=q.question, k=10)
    timings: dict[str, list[float]] = {
        "hybrid_search (total)": [],
        "query embedding": [],
        "vector SQL": [],
        "full-text SQL": [],
    }
    for q in questions:
        started = time.perf_counter()
        search.hybrid_search(query=q.question, k=10)
        timings["hybrid_search (total)"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        embed_query(q.question)
        timings["query embedding"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        search.vector_ranking(query=q.question, limit=search.CANDIDATES)
        timings["vector SQL"].append((time.perf_counter() - started) * 1000 - timings["query embedding"][-1])
        started = time.perf_counter()
        search.text_ranking(query=q.question, limit=search.CANDIDATES)
        timings["full-text SQL"].append((time.perf_counter() - started) * 1000)
    return {f"{name} p50": statistics.median(v) for name, v in timings.items()} | {
        f"{name} p95": _percentile(v, 0.95) for name, v in timings.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=1000, help="PubMedQA abstracts to ingest (default 1000)")
    parser.add_argument("--rounds", type=int, default=2, choices=[1, 2], help="2 = A-B-B-A order (default)")
    parser.add_argument("--sizes", default="10000,100000", help="store sizes for the latency test")
    parser.add_argument("--queries", type=int, default=200, help="questions timed per store size")
    parser.add_argument("--skip-ingest", action="store_true", help="only the latency test")
    args = parser.parse_args()
    setup_django(database="medcite_bench_ingest")

    from django.conf import settings

    from pubmed.models import Abstract

    records, questions = pubmedqa_records()
    records, questions = records[: args.limit], questions[: args.limit]
    print(f"Ingestion benchmark — {len(records)} PubMedQA abstracts, model {settings.EMBEDDING_MODEL}")
    print(f"start: {load_summary()}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pubmedqa.jsonl"
        _write_jsonl(records, path)
        results: dict[str, list[tuple[float, int, int, float]]] = {"naive": [], "shipped": []}
        recall: dict[str, float] = {}
        # A-B-B-A, ending on the shipped pipeline so the latency test runs on its vectors.
        order = ["naive", "shipped"] if args.rounds == 1 else ["shipped", "naive", "naive", "shipped"]
        if not args.skip_ingest:
            for pipeline in order:
                seconds, count, chunks, cpu = _ingest(path, pipeline=pipeline)
                results[pipeline].append((seconds, count, chunks, cpu))
                print(
                    f"  {pipeline:8s} {count} abstracts, {chunks} chunks in {seconds:6.1f} s "
                    f"({count / seconds:5.1f} abstracts/s; {cpu:6.1f} CPU s); {load_summary()}"
                )
                if pipeline not in recall:
                    recall[pipeline] = _recall_at_10(questions)
            rate = {p: sum(r[1] for r in runs) / sum(r[0] for r in runs) for p, runs in results.items()}
            cpu_rate = {p: sum(r[1] for r in runs) / sum(r[3] for r in runs) for p, runs in results.items()}
            print()
            print(
                "| pipeline | abstracts/s (wall, end to end) | chunks/s | abstracts per CPU-second | "
                "vector Recall@10 (PubMedQA) |"
            )
            print("|---|---:|---:|---:|---:|")
            for pipeline, name in PIPELINES.items():
                runs = results[pipeline]
                chunks_rate = sum(r[2] for r in runs) / sum(r[0] for r in runs)
                print(
                    f"| {name} | {rate[pipeline]:.1f} | {chunks_rate:.1f} | {cpu_rate[pipeline]:.1f} | "
                    f"{recall[pipeline]:.3f} |"
                )
            speedup = rate["shipped"] / rate["naive"]
            cpu_speedup = cpu_rate["shipped"] / cpu_rate["naive"]
            loss = (recall["naive"] - recall["shipped"]) * 100
            print(
                f"\nspeed-up {speedup:.2f}x wall-clock (target ≥ 5x: {'PASS' if speedup >= 5 else 'FAIL'}), "
                f"{cpu_speedup:.2f}x per CPU-second; Recall@10 change {-loss:+.1f} points "
                f"(target ≥ -1.0: {'PASS' if loss <= 1.0 else 'FAIL'})"
            )

    if args.rounds == 1 or args.skip_ingest:  # store the real corpus with the shipped pipeline's vectors
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "pubmedqa.jsonl"
            _write_jsonl(records, path)
            _ingest(path, pipeline="shipped")
    from evidence.text import split_sentences

    sentences = [s for r in records for s in split_sentences(r.abstract.replace("\n\n", " ")) if len(s) > 30]
    rng = random.Random(20260101)
    probe = questions[: args.queries]
    print()
    rows = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        seconds = _fill_synthetic(target=size, sentences=sentences, rng=rng)
        stored = Abstract.objects.count()
        print(f"store filled to {stored} abstracts in {seconds:.0f} s; timing {len(probe)} queries; {load_summary()}")
        rows.append((stored, _latency(probe)))
    if not rows:
        print(f"finished: {load_summary()}")
        return
    print()
    print(
        "| stored abstracts | hybrid p50 ms | hybrid p95 ms | query embed p50 | vector SQL p50 / p95 | "
        "full-text SQL p50 / p95 |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for stored, t in rows:
        print(
            f"| {stored:,} | {t['hybrid_search (total) p50']:.1f} | {t['hybrid_search (total) p95']:.1f} | "
            f"{t['query embedding p50']:.1f} | {t['vector SQL p50']:.1f} / {t['vector SQL p95']:.1f} | "
            f"{t['full-text SQL p50']:.1f} / {t['full-text SQL p95']:.1f} |"
        )
    p95 = rows[-1][1]["hybrid_search (total) p95"]
    print(f"\np95 at {rows[-1][0]:,}: {p95:.1f} ms (target ≤ 50 ms: {'PASS' if p95 <= 50 else 'FAIL'})")
    print(f"finished: {load_summary()}")


if __name__ == "__main__":
    main()
