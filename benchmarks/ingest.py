"""Ingestion throughput and hybrid-search latency, measured on this machine.

1. Abstracts per second end to end — parse (JSONL file of the 1,000 PubMedQA abstracts), chunk,
   embed, store — for the shipped pipeline (ONNX Runtime, int8, length-sorted token-budget batches,
   `abstracts_upsert_batches`: the next batch embeds while the previous one is written) against the
   naive baseline (sentence-transformers, fp32, default batch size 32, `abstracts_upsert` one batch
   after another) in the same run. Runs go
   A-B-B-A so a change in machine load affects both alike. Recall@10 of vector search over the
   stored chunks is measured for each, so any quality lost to int8 is visible.
2. p50/p95 latency of `hybrid_search` (query embedding + pgvector HNSW + full-text + fusion + rerank)
   at each of `--sizes` stored abstracts, with a PASS/FAIL per target (p95 ≤ 15 ms at 100,000,
   ≤ 25 ms at 1,000,000), hybrid Recall@10 / MRR@10 of the timed questions in that store, CPU per
   query, and the store's fill and index build times and chunk table, GIN and HNSW sizes.
   Beyond the 1,000 real abstracts a store is filled with synthetic ones: text made of sentences
   sampled from the real corpus, vectors made from real chunk vectors plus noise.

Ingestion uses its own database (`medcite_bench_ingest`); each store size has one more
(`medcite_bench_search_<size>`), kept between runs: a complete store filled by this version of the
filler is reused (its recorded fill times are printed), `--refill` fills it again. Never the
development database.

    .venv/bin/python benchmarks/ingest.py [--limit N] [--rounds 1|2] [--sizes 10000,100000,1000000]
        [--queries 200] [--skip-ingest] [--refill]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import load_summary, pubmedqa_records, setup_django

SYNTHETIC_PMID_START = 90_000_000
INGEST_DATABASE = "medcite_bench_ingest"
# Hybrid-search p95 targets (issue 15): (store size at least, milliseconds).
P95_TARGETS = ((1_000_000, 25.0), (100_000, 15.0))


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


# Bump when the synthetic store changes, so stores filled by an older filler are filled again.
FILLER_VERSION = 3
SEARCH_DATABASE = "medcite_bench_search_{size}"


@dataclass(frozen=True)
class Fill:
    """How a search store was filled: seconds for the rows, each index, VACUUM ANALYZE and lexeme stats."""

    rows_s: float
    gin_s: float
    hnsw_s: float
    vacuum_s: float
    lexemes_s: float
    reused: bool = False

    @property
    def total_s(self) -> float:
        return self.rows_s + self.gin_s + self.hnsw_s + self.vacuum_s + self.lexemes_s


def _use_database(name: str) -> None:
    """Point Django's connection at database `name` on the same server, creating and migrating it."""
    from django.core.management import call_command
    from django.db import connection

    if name == "medcite":
        raise SystemExit("Refusing to benchmark in the development database 'medcite'.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if not cursor.fetchone():
            cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    connection.settings_dict["NAME"] = name
    call_command("migrate", "pubmed", verbosity=0)


def _copy_columns(table: str) -> list[str]:
    """Return the columns COPY moves for `table`: all but the generated ones and the chunk id."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND is_generated = 'NEVER' "
            "AND column_name <> 'id' ORDER BY ordinal_position",
            [table],
        )
        return [row[0] for row in cursor.fetchall()]


def _real_corpus_stored(count: int) -> bool:
    """Return True if the current database holds `count` abstracts, every chunk with a current-model vector."""
    from pubmed.embeddings import current_model_name
    from pubmed.models import Abstract, AbstractChunk

    return (
        Abstract.objects.count() == count
        and AbstractChunk.objects.exists()
        and not AbstractChunk.objects.exclude(embedding_model=current_model_name()).exists()
    )


def _dump_real_corpus() -> dict[str, bytes]:
    """Return the stored (real) abstracts and chunks as binary COPY data, per table."""
    from django.db import connection

    dumps = {}
    with connection.cursor() as cursor:
        for table in ("pubmed_abstract", "pubmed_abstractchunk"):
            columns = ", ".join(_copy_columns(table))
            with cursor.cursor.copy(f"COPY (SELECT {columns} FROM {table}) TO STDOUT (FORMAT BINARY)") as copy:
                dumps[table] = b"".join(bytes(block) for block in copy)
    return dumps


def _recorded_fill(size: int) -> Fill | None:
    """Return how this database's store was filled when it holds a complete `size` store of this filler."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_fill (size integer, version integer, rows_s float, gin_s float, "
            "hnsw_s float, vacuum_s float, lexemes_s float)"
        )
        cursor.execute(
            "SELECT rows_s, gin_s, hnsw_s, vacuum_s, lexemes_s FROM bench_fill WHERE size = %s AND version = %s",
            [size, FILLER_VERSION],
        )
        row = cursor.fetchone()
        if row is None:
            return None
        cursor.execute("SELECT count(*) FROM pubmed_abstract")
        if cursor.fetchone()[0] != size:
            return None
    return Fill(*row, reused=True)


def _fill_synthetic(*, size: int, real: dict[str, bytes], sentences: list[str], seed: int) -> Fill:
    """Fill the current (empty or stale) database with the real corpus plus synthetic abstracts to `size`.

    Bulk-load order: rows by binary COPY with the GIN and HNSW indexes dropped, then each index
    built once (maintenance_work_mem large enough for the HNSW graph to be built in memory), then
    VACUUM ANALYZE and the lexeme statistics.
    """
    import numpy as np
    from django.db import connection
    from pgvector.psycopg import register_vector

    from pubmed.embeddings import current_model_name, get_embedder
    from pubmed.services.lexemes import lexeme_stats_refresh

    rng = random.Random(seed)
    dimension = get_embedder().spec.dimension
    model = current_model_name()
    started = time.perf_counter()
    with connection.cursor() as cursor:
        register_vector(cursor.cursor.connection)
        raw = cursor.cursor.connection.cursor()  # made after register_vector: reads and writes vectors
        cursor.execute("DELETE FROM bench_fill")
        cursor.execute("TRUNCATE pubmed_abstractchunk, pubmed_abstract, pubmed_lexemestat RESTART IDENTITY CASCADE")
        cursor.execute(f"DROP INDEX IF EXISTS chunk_embedding_hnsw_{dimension}")
        cursor.execute("DROP INDEX IF EXISTS chunk_search_vector_gin")
        for table, data in real.items():
            with raw.copy(f"COPY {table} ({', '.join(_copy_columns(table))}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(data)
        raw.execute(f"SELECT embedding FROM pubmed_abstractchunk WHERE embedding_dim = {dimension}")
        vectors_real = np.array([row[0].to_numpy() for row in raw.fetchall()], dtype=np.float32)
        cursor.execute("SELECT count(*) FROM pubmed_abstract")
        have = cursor.fetchone()[0]
        noise_rng = np.random.default_rng(seed)
        next_pmid = SYNTHETIC_PMID_START
        batch = 20_000
        while have < size:
            count = min(batch, size - have)
            pmids = [str(next_pmid + i) for i in range(count)]
            next_pmid += count
            texts = [" ".join(rng.sample(sentences, rng.randint(3, 7))) for _ in range(count)]
            base = vectors_real[noise_rng.integers(0, len(vectors_real), size=count)]
            vectors = base + noise_rng.normal(0, 0.04, size=base.shape).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            with raw.copy(
                "COPY pubmed_abstract (pmid, title, abstract, sections, authors, journal, journal_title, pub_date_raw,"
                " year, mesh_terms, mesh_major, mesh_headings, publication_types, keywords, doi, pmcid, is_book,"
                " corrections, is_retracted, has_expression_of_concern, evidence_level, evidence_level_inferred,"
                " source, content_hash, fetched_at, updated_at) FROM STDIN"
            ) as copy:
                for pmid, text in zip(pmids, texts, strict=True):
                    copy.write_row(
                        [pmid, "", text, "[]", "{}", "Synthetic J", "", "2020", 2000 + int(pmid) % 25, "{}", "{}",
                         "[]", "{Journal Article}", "{}", "", "", False, "[]", False, False, "other", True, "jsonl",
                         pmid, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"]
                    )
            with raw.copy(
                "COPY pubmed_abstractchunk (abstract_id, ordinal, section, title, text, embedding, embedding_model,"
                " embedding_dim) FROM STDIN (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["text", "int2", "text", "text", "text", "vector", "text", "int2"])
                for pmid, text, vector in zip(pmids, texts, vectors, strict=True):
                    copy.write_row([pmid, 0, "", "", text, vector, model, dimension])
            have += count
        rows_s = time.perf_counter() - started
        # Room for the whole HNSW graph (about 2 GB at a million 384-d vectors): a graph that outgrows
        # maintenance_work_mem is finished by a much slower on-disk insertion path.
        cursor.execute("SET maintenance_work_mem = '6GB'")
        cursor.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        cursor.execute('CREATE INDEX chunk_search_vector_gin ON pubmed_abstractchunk USING gin (search_vector)')
        gin_s = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute(
            f"CREATE INDEX chunk_embedding_hnsw_{dimension} ON pubmed_abstractchunk USING hnsw "
            f"((embedding::vector({dimension})) vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
            f"WHERE embedding_dim = {dimension}"
        )
        hnsw_s = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute("VACUUM ANALYZE pubmed_abstract")
        cursor.execute("VACUUM ANALYZE pubmed_abstractchunk")
        vacuum_s = time.perf_counter() - started
    started = time.perf_counter()
    lexeme_stats_refresh()
    fill = Fill(rows_s, gin_s, hnsw_s, vacuum_s, time.perf_counter() - started)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_fill VALUES (%s, %s, %s, %s, %s, %s, %s)",
            [size, FILLER_VERSION, fill.rows_s, fill.gin_s, fill.hnsw_s, fill.vacuum_s, fill.lexemes_s],
        )
    return fill


def _store_sizes() -> dict[str, int]:
    """Return bytes on disk of the chunk table (heap; heap + TOAST) and of its GIN and HNSW indexes."""
    from django.db import connection

    from pubmed.embeddings import get_embedder

    dimension = get_embedder().spec.dimension
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_relation_size('pubmed_abstractchunk'), pg_table_size('pubmed_abstractchunk'), "
            "pg_relation_size('chunk_search_vector_gin'), pg_relation_size(%s), pg_database_size(current_database())",
            [f"chunk_embedding_hnsw_{dimension}"],
        )
        heap, table, gin, hnsw, database = cursor.fetchone()
    return {"heap": heap, "table": table, "gin": gin, "hnsw": hnsw, "database": database}


WARMUP_QUERIES = 800


def _latency(questions: list, *, warmup: list) -> dict[str, float]:
    """Time hybrid search and its parts over `questions`; also its Recall@10, MRR@10 and CPU per query.

    `warmup` questions (others than those timed) are searched first, untimed: a server that has been
    answering holds the hot index pages in its shared buffers, one just started does not, and a timed
    question must not find its own embedding cached.

    Quality is that of the shipped hybrid search in this store: each question's own (real) abstract
    among the synthetic ones. CPU per hybrid query, of this process (all threads: ONNX Runtime's
    spin more under load) and of its PostgreSQL backend, moves less with the machine's load than
    the latencies do.
    """
    from pubmed.embeddings import embed_query
    from pubmed.services import search

    for q in warmup:
        search.hybrid_search(query=q.question, k=10)
    timings: dict[str, list[float]] = {
        "hybrid_search (total)": [],
        "query embedding": [],
        "vector SQL": [],
        "full-text SQL": [],
    }
    found, reciprocal, cpu, backend_cpu = 0, 0.0, 0.0, 0.0
    for q in questions:
        cpu_started, backend_started = time.process_time(), _backend_cpu_seconds()
        started = time.perf_counter()
        hits = search.hybrid_search(query=q.question, k=10)
        timings["hybrid_search (total)"].append((time.perf_counter() - started) * 1000)
        cpu += time.process_time() - cpu_started
        backend_cpu += _backend_cpu_seconds() - backend_started
        pmids = [hit.pmid for hit in hits]
        if q.pmid in pmids:
            found += 1
            reciprocal += 1 / (pmids.index(q.pmid) + 1)
        started = time.perf_counter()
        vector = embed_query(q.question)
        timings["query embedding"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        search.vector_ranking(query=q.question, limit=search.CANDIDATES, query_vector=vector)
        timings["vector SQL"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        search.text_ranking(query=q.question, limit=search.CANDIDATES)
        timings["full-text SQL"].append((time.perf_counter() - started) * 1000)
    quality = {
        "Recall@10": found / len(questions),
        "MRR@10": reciprocal / len(questions),
        "process CPU ms per query": cpu / len(questions) * 1000,
        "PostgreSQL CPU ms per query": backend_cpu / len(questions) * 1000,
    }
    return (
        {f"{name} p50": statistics.median(v) for name, v in timings.items()}
        | {f"{name} p95": _percentile(v, 0.95) for name, v in timings.items()}
        | quality
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=1000, help="PubMedQA abstracts to ingest (default 1000)")
    parser.add_argument("--rounds", type=int, default=2, choices=[1, 2], help="2 = A-B-B-A order (default)")
    parser.add_argument("--sizes", default="10000,100000", help="store sizes for the latency test")
    parser.add_argument("--queries", type=int, default=200, help="questions timed per store size")
    parser.add_argument("--skip-ingest", action="store_true", help="only the latency test")
    parser.add_argument(
        "--refill", action="store_true",
        help="fill the search stores again (by default a complete store from an earlier run is reused)",
    )
    args = parser.parse_args()
    setup_django(database=INGEST_DATABASE)

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

    from evidence.sentences import split_sentences

    sentences = [s for r in records for s in split_sentences(r.abstract.replace("\n\n", " ")) if len(s) > 30]
    probe = questions[: args.queries]
    real: dict[str, bytes] | None = None
    print()
    rows = []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        if size < len(records):
            raise SystemExit(f"--sizes: each size must be at least the {len(records)} real abstracts, got {size}.")
        _use_database(SEARCH_DATABASE.format(size=size))
        fill = None if args.refill else _recorded_fill(size)
        if fill is None:
            if real is None:  # the real corpus with the shipped pipeline's vectors, embedded once
                _use_database(INGEST_DATABASE)
                # The ingestion runs end on the shipped pipeline; with --skip-ingest an earlier run's
                # corpus is used when it is complete, else the corpus is ingested now.
                if args.skip_ingest and not _real_corpus_stored(len(records)):
                    with tempfile.TemporaryDirectory() as tmp:
                        path = Path(tmp) / "pubmedqa.jsonl"
                        _write_jsonl(records, path)
                        _ingest(path, pipeline="shipped")
                real = _dump_real_corpus()
                _use_database(SEARCH_DATABASE.format(size=size))
            print(f"filling {SEARCH_DATABASE.format(size=size)} to {size:,} abstracts; {load_summary()}")
            fill = _fill_synthetic(size=size, real=real, sentences=sentences, seed=20260101)
        settings.EMBEDDING_BACKEND = "onnx-int8"
        sizes = _store_sizes()
        print(
            f"store of {Abstract.objects.count():,} abstracts {'reused, filled' if fill.reused else 'filled'} in "
            f"{fill.total_s:.0f} s (rows {fill.rows_s:.0f} s, GIN {fill.gin_s:.0f} s, HNSW {fill.hnsw_s:.0f} s, "
            f"VACUUM ANALYZE {fill.vacuum_s:.0f} s, lexeme stats {fill.lexemes_s:.0f} s); chunk table "
            f"{_mb(sizes['heap'])} heap, {_mb(sizes['table'])} with TOAST; GIN {_mb(sizes['gin'])}; "
            f"HNSW {_mb(sizes['hnsw'])}; database {_mb(sizes['database'])}"
        )
        print(f"timing {len(probe)} queries; {load_summary()}")
        rows.append((size, fill, sizes, _latency(probe, warmup=questions[args.queries :][:WARMUP_QUERIES])))
    if not rows:
        print(f"finished: {load_summary()}")
        return
    print()
    print(
        "| stored abstracts | hybrid p50 ms | hybrid p95 ms | query embed p50 | vector SQL p50 / p95 | "
        "full-text SQL p50 / p95 | CPU ms per query: process / PostgreSQL | Recall@10 | MRR@10 | "
        "fill + index build s | chunk table (with TOAST) | GIN | HNSW |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, fill, sizes, t in rows:
        print(
            f"| {size:,} | {t['hybrid_search (total) p50']:.1f} | {t['hybrid_search (total) p95']:.1f} | "
            f"{t['query embedding p50']:.1f} | {t['vector SQL p50']:.1f} / {t['vector SQL p95']:.1f} | "
            f"{t['full-text SQL p50']:.1f} / {t['full-text SQL p95']:.1f} | "
            f"{t['process CPU ms per query']:.1f} / {t['PostgreSQL CPU ms per query']:.1f} | "
            f"{t['Recall@10']:.3f} | {t['MRR@10']:.3f} | {fill.rows_s:.0f} + {fill.total_s - fill.rows_s:.0f} | "
            f"{_mb(sizes['table'])} | {_mb(sizes['gin'])} | {_mb(sizes['hnsw'])} |"
        )
    print()
    for size, _, _, t in rows:
        p95 = t["hybrid_search (total) p95"]
        target = next((ms for at_least, ms in P95_TARGETS if size >= at_least), None)
        verdict = "no target below 100,000" if target is None else (
            f"target ≤ {target} ms: {'PASS' if p95 <= target else 'FAIL'}"
        )
        print(f"hybrid p95 at {size:,} abstracts: {p95:.1f} ms ({verdict})")
    print(f"finished: {load_summary()}")


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


if __name__ == "__main__":
    main()
