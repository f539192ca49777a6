"""Vectors in PostgreSQL: the one way a vector is written (pgvector's text literal), and its HNSW index."""

from __future__ import annotations

import numpy as np
from django.db import connection

# (database name, dimension) whose index is known to exist: looked up once per process.
_KNOWN_VECTOR_INDEXES: set[tuple[str, int]] = set()


def vector_literal(vector: np.ndarray) -> str:
    """Return `vector` as a pgvector literal, "[0.1,0.2,...]", cast with `%s::vector(n)` in SQL.

    Nine significant digits give back the same float32, so a stored vector is the computed one and a
    query vector is the embedder's. One format string per row took 0.35 CPU-s for 2,000 vectors,
    against 0.56 s value by value and 0.92 s through pgvector's text dumper.
    """
    values = vector.tolist()
    return "[" + ",".join(["%.9g"] * len(values)) % tuple(values) + "]"


def vector_index_ensure(*, dimension: int) -> None:
    """Create the partial HNSW cosine index for vectors of `dimension` if it does not exist yet."""
    if not 1 <= dimension <= 16000:
        raise ValueError(f"Embedding dimension must be between 1 and 16000, got {dimension}.")
    key = (connection.settings_dict["NAME"], dimension)
    if key in _KNOWN_VECTOR_INDEXES:
        return
    with connection.cursor() as cursor:
        # Look first: CREATE INDEX (even IF NOT EXISTS) fails inside a transaction with pending
        # deferred-constraint events, and the index almost always exists already.
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [f"chunk_embedding_hnsw_{dimension}"])
        if cursor.fetchone():
            _KNOWN_VECTOR_INDEXES.add(key)
            return
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS chunk_embedding_hnsw_{dimension} ON pubmed_abstractchunk "
            f"USING hnsw ((embedding::vector({dimension})) vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
            f"WHERE embedding_dim = {dimension}"
        )
    _KNOWN_VECTOR_INDEXES.add(key)
