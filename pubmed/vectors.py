"""The one way a vector is written for PostgreSQL: pgvector's text literal."""

from __future__ import annotations

import numpy as np


def vector_literal(vector: np.ndarray) -> str:
    """Return `vector` as a pgvector literal, "[0.1,0.2,...]", cast with `%s::vector(n)` in SQL.

    Nine significant digits give back the same float32, so a stored vector is the computed one and a
    query vector is the embedder's. One format string per row took 0.35 CPU-s for 2,000 vectors,
    against 0.56 s value by value and 0.92 s through pgvector's text dumper.
    """
    values = vector.tolist()
    return "[" + ",".join(["%.9g"] * len(values)) % tuple(values) + "]"
