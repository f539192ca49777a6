"""Write abstracts and their embedded chunks; re-embed when the embedding model changes."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import structlog
from django.db import connection, transaction
from django.utils import timezone

from evidence.integrity import assess_integrity
from evidence.levels import assess_level
from pubmed.chunking import Chunk, chunk_abstract, embedding_text
from pubmed.embeddings import get_embedder
from pubmed.models import Abstract, AbstractChunk, AbstractSource, LexemeStat
from pubmed.parsers import AbstractRecord

logger = structlog.get_logger(__name__)

_ABSTRACT_FIELDS = [
    "title", "abstract", "sections", "authors", "journal", "journal_title", "pub_date", "pub_date_raw", "year",
    "mesh_terms", "mesh_major", "mesh_headings", "publication_types", "keywords", "doi", "pmcid", "is_book",
    "corrections", "is_retracted", "has_expression_of_concern", "evidence_level", "evidence_level_inferred",
    "source", "content_hash", "fetched_at",
]


@dataclass(frozen=True)
class UpsertResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    embedded: int = 0
    pmids: list[str] = field(default_factory=list)


def content_hash(record: AbstractRecord) -> str:
    """Hash what chunks and vectors are made from: a changed hash means re-chunk and re-embed."""
    return hashlib.sha256(f"{record.title}\n\n{record.abstract}".encode()).hexdigest()


def _abstract_row(record: AbstractRecord, *, source: str, digest: str) -> Abstract:
    corrections = [link.as_dict() for link in record.corrections]
    integrity = assess_integrity(publication_types=record.publication_types, corrections=corrections)
    level = assess_level(
        publication_types=record.publication_types, mesh_terms=record.mesh_terms, title=record.title,
        abstract=record.abstract,
    )
    return Abstract(
        pmid=record.pmid,
        title=record.title,
        abstract=record.abstract,
        sections=[dataclasses.asdict(section) for section in record.sections],
        authors=record.authors,
        journal=record.journal[:300],
        journal_title=record.journal_title[:500],
        pub_date=record.pub_date,
        pub_date_raw=record.pub_date_raw[:100],
        year=record.year,
        mesh_terms=record.mesh_terms,
        mesh_major=record.mesh_major,
        mesh_headings=[
            {"descriptor": h.descriptor, "major": h.major, "qualifiers": list(h.qualifiers)}
            for h in record.mesh_headings
        ],
        publication_types=record.publication_types,
        keywords=record.keywords,
        doi=record.doi,
        pmcid=record.pmcid,
        is_book=record.is_book,
        corrections=corrections,
        is_retracted=integrity.retracted,
        has_expression_of_concern=integrity.expression_of_concern,
        evidence_level=level.level,
        evidence_level_inferred=level.inferred,
        source=source,
        content_hash=digest,
        fetched_at=timezone.now(),
    )


_KNOWN_VECTOR_INDEXES: set[tuple[str, int]] = set()


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


def _embed_chunks(items: list[tuple[str, Chunk]]) -> tuple[np.ndarray, str, int]:
    embedder = get_embedder()
    texts = [embedding_text(title=title, chunk_text=chunk.text) for title, chunk in items]
    vectors = embedder.embed(texts)
    return vectors, embedder.spec.name, embedder.spec.dimension


def abstracts_upsert(
    *,
    records: Iterable[AbstractRecord],
    embed: bool = True,
    source: str = AbstractSource.EFETCH,
) -> UpsertResult:
    """Insert or update abstracts and (re)build the chunks of those whose text changed.

    Embedding happens before the write transaction so no lock is held while the model runs; the
    abstracts and chunks are then written in one transaction, so a failure stores nothing. Records
    whose title and abstract are unchanged keep their chunks (and get vectors if they lack them).
    """
    unique = {record.pmid: record for record in records}
    if not unique:
        return UpsertResult()
    pmids = sorted(unique)  # a fixed lock order: concurrent upserts of overlapping sets cannot deadlock
    digests = {pmid: content_hash(unique[pmid]) for pmid in pmids}
    existing = dict(Abstract.objects.filter(pmid__in=pmids).values_list("pmid", "content_hash"))
    changed = [pmid for pmid in pmids if existing.get(pmid) != digests[pmid]]
    new_chunks = {
        pmid: chunk_abstract(title=unique[pmid].title, sections=unique[pmid].sections, abstract=unique[pmid].abstract)
        for pmid in changed
    }
    unchanged = [pmid for pmid in pmids if pmid in existing and pmid not in new_chunks]

    vectors: dict[tuple[str, int], np.ndarray] = {}
    model_name, dimension = "", 0
    stale: list[AbstractChunk] = []
    if embed:
        embedder = get_embedder()
        model_name, dimension = embedder.spec.name, embedder.spec.dimension
        stale = list(
            AbstractChunk.objects.filter(abstract_id__in=unchanged)
            .exclude(embedding_model=model_name, embedding_dim=dimension, embedding__isnull=False)
            .only("id", "abstract_id", "ordinal", "title", "text")
        )
        items = [(unique[pmid].title, chunk) for pmid in changed for chunk in new_chunks[pmid]]
        keys = [(pmid, chunk.ordinal) for pmid in changed for chunk in new_chunks[pmid]]
        items += [(chunk.title, Chunk(chunk.ordinal, "", chunk.text)) for chunk in stale]
        keys += [(chunk.abstract_id, chunk.ordinal) for chunk in stale]
        if items:
            matrix, model_name, dimension = _embed_chunks(items)
            vectors = dict(zip(keys, matrix, strict=True))

    with transaction.atomic():
        if embed and dimension:
            vector_index_ensure(dimension=dimension)
        Abstract.objects.bulk_create(
            [_abstract_row(unique[pmid], source=source, digest=digests[pmid]) for pmid in pmids],
            update_conflicts=True,
            unique_fields=["pmid"],
            update_fields=_ABSTRACT_FIELDS,
            batch_size=500,
        )
        AbstractChunk.objects.filter(abstract_id__in=changed).delete()
        rows = []
        for pmid in changed:
            for chunk in new_chunks[pmid]:
                vector = vectors.get((pmid, chunk.ordinal))
                rows.append(
                    AbstractChunk(
                        abstract_id=pmid,
                        ordinal=chunk.ordinal,
                        section=chunk.section,
                        title=unique[pmid].title,
                        text=chunk.text,
                        embedding=vector,
                        embedding_model=model_name if vector is not None else "",
                        embedding_dim=dimension if vector is not None else None,
                    )
                )
        AbstractChunk.objects.bulk_create(rows, batch_size=500)
        for stale_chunk in stale:
            stale_chunk.embedding = vectors[(stale_chunk.abstract_id, stale_chunk.ordinal)]
            stale_chunk.embedding_model = model_name
            stale_chunk.embedding_dim = dimension
        AbstractChunk.objects.bulk_update(stale, ["embedding", "embedding_model", "embedding_dim"], batch_size=500)
    if changed:
        lexeme_stats_refresh_if_stale()
    created = sum(1 for pmid in pmids if pmid not in existing)
    result = UpsertResult(
        created=created,
        updated=len(changed) - created,
        unchanged=len(unchanged),
        embedded=len(vectors),
        pmids=pmids,
    )
    logger.info("abstracts_upserted", created=result.created, updated=result.updated,
                unchanged=result.unchanged, embedded=result.embedded)
    return result


def chunks_reembed(
    *,
    everything: bool = False,
    batch_size: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed chunks whose vector is missing or from another model (all chunks with `everything`).

    Works in batches, each committed on its own, so an interrupted run keeps what it finished and
    a rerun continues where it stopped. Returns the number of chunks embedded.
    """
    embedder = get_embedder()
    name, dimension = embedder.spec.name, embedder.spec.dimension
    vector_index_ensure(dimension=dimension)
    queryset = AbstractChunk.objects.all()
    if not everything:
        queryset = queryset.exclude(embedding_model=name, embedding_dim=dimension, embedding__isnull=False)
    total = queryset.count()
    done = 0
    last_id = 0
    while True:
        batch = list(queryset.filter(id__gt=last_id).order_by("id").only("id", "title", "text")[:batch_size])
        if not batch:
            break
        last_id = batch[-1].id
        matrix = embedder.embed([embedding_text(title=chunk.title, chunk_text=chunk.text) for chunk in batch])
        for chunk, vector in zip(batch, matrix, strict=True):
            chunk.embedding = vector
            chunk.embedding_model = name
            chunk.embedding_dim = dimension
        with transaction.atomic():
            AbstractChunk.objects.bulk_update(batch, ["embedding", "embedding_model", "embedding_dim"])
        done += len(batch)
        if progress:
            progress(done, total)
    return done


# Refresh the lexeme statistics when the chunk count has moved this much since the last refresh.
LEXEME_STATS_DRIFT = 0.25


def lexeme_stats_refresh() -> int:
    """Recount, for every full-text lexeme, how many chunks contain it; return the chunk total."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pubmed_abstractchunk")
        total = cursor.fetchone()[0]
        cursor.execute("DELETE FROM pubmed_lexemestat")
        cursor.execute(
            "INSERT INTO pubmed_lexemestat (lexeme, ndoc) "
            "SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM pubmed_abstractchunk') "
            "WHERE length(word) <= 255"
        )
        cursor.execute("INSERT INTO pubmed_lexemestat (lexeme, ndoc) VALUES ('', %s)", [total])
    return total


def lexeme_stats_refresh_if_stale() -> None:
    """Refresh the lexeme statistics if the store grew or shrank by LEXEME_STATS_DRIFT since the last count."""
    recorded = LexemeStat.objects.filter(lexeme="").values_list("ndoc", flat=True).first()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pubmed_abstractchunk")
        total = cursor.fetchone()[0]
    if recorded is None or abs(total - recorded) > LEXEME_STATS_DRIFT * max(recorded, 1):
        lexeme_stats_refresh()
