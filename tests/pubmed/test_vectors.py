"""The one vector literal: what PostgreSQL reads back is the float32 vector that was written."""

import numpy as np
import pytest

from pubmed.vectors import vector_literal


def test_the_literal_gives_back_the_same_float32_values() -> None:
    vector = np.random.default_rng(7).standard_normal(384).astype(np.float32) / 10
    literal = vector_literal(vector)
    assert literal.startswith("[") and literal.endswith("]")
    parsed = np.array([float(value) for value in literal[1:-1].split(",")], dtype=np.float32)
    assert np.array_equal(parsed, vector)  # seven significant digits (the old query literal) lose some


@pytest.mark.django_db
def test_postgresql_reads_the_literal_as_the_same_vector() -> None:
    from django.db import connection

    vector = np.array([0.123456789, -1e-7, 3.0], dtype=np.float32)
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::vector(3)::text", [vector_literal(vector)])
        (text,) = cursor.fetchone()
    assert np.array_equal(np.array(text.strip("[]").split(","), dtype=np.float32), vector)
