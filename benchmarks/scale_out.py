"""What a store of N abstracts costs PostgreSQL: table and index sizes, index build times, per million abstracts.

The numbers behind README "Scaling out": how big the chunk table, its HNSW (vector) and GIN (full-text)
indexes get, and how long building them takes, so the plan for more than one machine (partitioning the
chunk table, read replicas for search) rests on measurements. The store is filled with N synthetic
abstracts of two chunks each (the PubMedQA corpus has 2.0 chunks per abstract): text made of sentences
sampled from PubMedQA, vectors made from real chunk embeddings plus Gaussian noise, as in
benchmarks/ingest.py. Rows go in with COPY and the indexes are built afterwards, timed one by one, the
way a bulk load of a new partition or replica would. Database `medcite_bench_scale`.

    .venv/bin/python benchmarks/scale_out.py [--abstracts 100000] [--maintenance-work-mem 512MB]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pubmed.benchmarking import load_summary, pubmedqa_records, setup_django

CHUNKS_PER_ABSTRACT = 2
FIRST_PMID = 90_000_000


def _vectors_from_real_chunks(sentences: list[str], rng: random.Random, count: int = 128):  # type: ignore[no-untyped-def]
    from pubmed.embeddings import get_embedder

    texts = [" ".join(rng.sample(sentences, 4)) for _ in range(count)]
    return get_embedder().embed(texts)


def _fill(cursor, *, abstracts: int, sentences: list[str], base, rng: random.Random) -> float:  # type: ignore[no-untyped-def]
    import numpy as np

    from pubmed.embeddings import current_model_name

    model, dimension = current_model_name(), base.shape[1]
    noise_rng = np.random.default_rng(20261124)
    started = time.perf_counter()
    batch = 10_000
    for start in range(0, abstracts, batch):
        size = min(batch, abstracts - start)
        pmids = [str(FIRST_PMID + start + i) for i in range(size)]
        texts = [[" ".join(rng.sample(sentences, rng.randint(3, 5))) for _ in range(CHUNKS_PER_ABSTRACT)]
                 for _ in range(size)]
        vectors = base[noise_rng.integers(0, len(base), size * CHUNKS_PER_ABSTRACT)]
        vectors = vectors + noise_rng.normal(0, 0.04, size=vectors.shape).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with cursor.copy(
            "COPY pubmed_abstract (pmid, title, abstract, sections, authors, journal, journal_title, pub_date_raw,"
            " year, mesh_terms, mesh_major, mesh_headings, publication_types, keywords, doi, pmcid, is_book,"
            " source, content_hash, fetched_at, updated_at, corrections, is_retracted, has_expression_of_concern,"
            " evidence_level, evidence_level_inferred) FROM STDIN"
        ) as copy:
            for pmid, chunk_texts in zip(pmids, texts, strict=True):
                copy.write_row([pmid, chunk_texts[0][:120], "\n\n".join(chunk_texts), "[]", "{}", "Synthetic J", "",
                                "2020", 2000 + int(pmid) % 25, "{}", "{}", "[]", "{Journal Article}", "{}", "", "",
                                False, "xml", pmid, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "[]", False,
                                False, "other", True])
        with cursor.copy(
            "COPY pubmed_abstractchunk (abstract_id, ordinal, section, title, text, embedding, embedding_model,"
            " embedding_dim) FROM STDIN"
        ) as copy:
            row = 0
            for pmid, chunk_texts in zip(pmids, texts, strict=True):
                for ordinal, text in enumerate(chunk_texts):
                    literal = "[" + ",".join(np.char.mod("%.6f", vectors[row])) + "]"
                    copy.write_row([pmid, ordinal, "", chunk_texts[0][:120], text, literal, model, dimension])
                    row += 1
        print(f"  {start + size:,} abstracts stored; {load_summary()}", flush=True)
    return time.perf_counter() - started


def _size(cursor, relation: str) -> int:  # type: ignore[no-untyped-def]
    cursor.execute("SELECT pg_relation_size(%s::regclass)", [relation])
    return int(cursor.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--abstracts", type=int, default=100_000)
    parser.add_argument("--maintenance-work-mem", default="512MB", help="for the index builds (default 512MB)")
    args = parser.parse_args()
    setup_django(database="medcite_bench_scale")

    from django.db import connection

    from evidence.text import split_sentences
    from pubmed.embeddings import get_embedder

    records, _ = pubmedqa_records()
    sentences = [s for r in records for s in split_sentences(r.abstract.replace("\n\n", " ")) if len(s) > 30]
    rng = random.Random(20261124)
    dimension = get_embedder().spec.dimension
    print(f"Scale-out measurements - {args.abstracts:,} synthetic abstracts, {CHUNKS_PER_ABSTRACT} chunks each, "
          f"{dimension}-d vectors")
    print(f"start: {load_summary()}")
    base = _vectors_from_real_chunks(sentences, rng)
    hnsw = f"chunk_embedding_hnsw_{dimension}"
    with connection.cursor() as django_cursor:
        cursor = django_cursor.cursor
        cursor.execute("TRUNCATE pubmed_abstractchunk, pubmed_abstract CASCADE")
        cursor.execute(f"DROP INDEX IF EXISTS {hnsw}")
        cursor.execute("DROP INDEX IF EXISTS chunk_search_vector_gin")
        fill_seconds = _fill(cursor, abstracts=args.abstracts, sentences=sentences, base=base, rng=rng)
        cursor.execute(f"SET maintenance_work_mem = '{args.maintenance_work_mem}'")
        cursor.execute("SET max_parallel_maintenance_workers = 0")  # 2 shared cores: one build process
        builds = {}
        started = time.perf_counter()
        cursor.execute("CREATE INDEX chunk_search_vector_gin ON pubmed_abstractchunk USING gin (search_vector)")
        builds["GIN (full-text)"] = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute(
            f"CREATE INDEX {hnsw} ON pubmed_abstractchunk USING hnsw ((embedding::vector({dimension})) "
            f"vector_cosine_ops) WITH (m = 16, ef_construction = 64) WHERE embedding_dim = {dimension}"
        )
        builds["HNSW (vector, m=16, ef_construction=64)"] = time.perf_counter() - started
        cursor.execute("ANALYZE pubmed_abstract")
        cursor.execute("ANALYZE pubmed_abstractchunk")
        cursor.execute("SELECT count(*) FROM pubmed_abstractchunk")
        chunks = cursor.fetchone()[0]
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'pubmed_abstractchunk'::regclass"
        )
        toast = cursor.fetchone()[0]
        sizes = {
            "abstract table (heap + TOAST + indexes)": None,
            "chunk table heap": _size(cursor, "pubmed_abstractchunk"),
            "chunk table TOAST (long texts)": _size(cursor, toast) if toast else 0,
            "HNSW index (vectors)": _size(cursor, hnsw),
            "GIN index (full-text)": _size(cursor, "chunk_search_vector_gin"),
            "chunk primary key + unique (abstract, ordinal) + model index": sum(
                _size(cursor, name) for name in _other_chunk_indexes(cursor, exclude={hnsw, "chunk_search_vector_gin"})
            ),
        }
        cursor.execute("SELECT pg_total_relation_size('pubmed_abstract')")
        sizes["abstract table (heap + TOAST + indexes)"] = int(cursor.fetchone()[0])
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]
    per_million = 1_000_000 / args.abstracts
    print(f"\nfilled {args.abstracts:,} abstracts / {chunks:,} chunks with COPY in {fill_seconds:.0f} s "
          f"({args.abstracts / fill_seconds:,.0f} abstracts/s); shared_buffers {shared_buffers}, "
          f"maintenance_work_mem {args.maintenance_work_mem}")
    print()
    print(f"| relation | size at {args.abstracts:,} abstracts | per 1,000,000 abstracts (linear) |")
    print("|---|---:|---:|")
    for name, size in sizes.items():
        assert size is not None
        print(f"| {name} | {size / 2**20:,.0f} MiB | {size * per_million / 2**30:,.2f} GiB |")
    total = sum(size for size in sizes.values() if size is not None)
    print(f"| **total** | **{total / 2**20:,.0f} MiB** | **{total * per_million / 2**30:,.2f} GiB** |")
    print()
    print(f"| index build (one process) | seconds at {args.abstracts:,} | seconds per 1,000,000 (linear; HNSW grows "
          "a little faster) |")
    print("|---|---:|---:|")
    for name, seconds in builds.items():
        print(f"| {name} | {seconds:,.0f} | {seconds * per_million:,.0f} |")
    print(f"\nfinished: {load_summary()}")


def _other_chunk_indexes(cursor, *, exclude: set[str]) -> list[str]:  # type: ignore[no-untyped-def]
    cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'pubmed_abstractchunk'")
    return [name for (name,) in cursor.fetchall() if name not in exclude]


if __name__ == "__main__":
    main()
