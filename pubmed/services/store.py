"""Write abstracts and their embedded chunks; re-embed when the embedding model changes."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import structlog
from django.db import connection, transaction
from django.utils import timezone

from evidence.integrity import assess_integrity
from evidence.levels import assess_level
from evidence.screening import instruction_sentences, screened_version
from pubmed.chunking import Chunk, chunk_abstract, embedding_text
from pubmed.embeddings import get_embedder
from pubmed.models import Abstract, AbstractChunk, AbstractSource
from pubmed.parsers import AbstractRecord
from pubmed.services.lexemes import lexeme_stats_refresh_if_stale
from pubmed.vectors import vector_index_ensure, vector_literal

logger = structlog.get_logger(__name__)

_ABSTRACT_FIELDS = [
    "title", "abstract", "sections", "authors", "journal", "journal_title", "pub_date", "pub_date_raw", "year",
    "mesh_terms", "mesh_major", "mesh_headings", "publication_types", "keywords", "doi", "pmcid", "is_book",
    "corrections", "is_retracted", "has_expression_of_concern", "evidence_level", "evidence_level_inferred",
    "source", "content_hash", "fetched_at", "has_instructions", "instruction_sentences",
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
    # Sentences addressed to an AI are stored as PubMed gave them, and named for curators.
    instructions = instruction_sentences(record.title) + instruction_sentences(record.abstract)
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
        has_instructions=bool(instructions),
        instruction_sentences=instructions,
        evidence_level=level.level,
        evidence_level_inferred=level.inferred,
        source=source,
        content_hash=digest,
        fetched_at=timezone.now(),
    )



@dataclass
class _UpsertPlan:
    """What one batch of records will change, worked out before anything is embedded or written."""

    records: dict[str, AbstractRecord]
    pmids: list[str]
    digests: dict[str, str]
    existing: set[str]
    changed: list[str]
    new_chunks: dict[str, list[Chunk]]
    unchanged: list[str]
    stale: list[AbstractChunk]
    embed: bool
    seen: dict[str, str] = field(default_factory=dict)  # content hashes the plan was made against
    keys: list[tuple[str, int]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Vectors:
    by_chunk: dict[tuple[str, int], np.ndarray]
    model_name: str = ""
    dimension: int = 0


def _upsert_plan(
    *, records: Iterable[AbstractRecord], embed: bool, pending: dict[str, str] | None = None
) -> _UpsertPlan:
    """Compare the records with the store, chunk the changed ones and list the texts to embed.

    `pending` maps PMIDs of a batch that is being written right now to their content hashes: they
    count as stored with those hashes, so a PMID repeated in the next batch is judged as it will be.
    """
    pending = pending or {}
    unique = {record.pmid: record for record in records}
    pmids = sorted(unique)  # a fixed lock order: concurrent upserts of overlapping sets cannot deadlock
    digests = {pmid: content_hash(unique[pmid]) for pmid in pmids}
    stored = dict(Abstract.objects.filter(pmid__in=pmids).values_list("pmid", "content_hash")) if pmids else {}
    stored.update({pmid: pending[pmid] for pmid in pmids if pmid in pending})
    changed = [pmid for pmid in pmids if stored.get(pmid) != digests[pmid]]
    new_chunks = {
        pmid: chunk_abstract(title=unique[pmid].title, sections=unique[pmid].sections, abstract=unique[pmid].abstract)
        for pmid in changed
    }
    unchanged = [pmid for pmid in pmids if pmid in stored and pmid not in new_chunks]
    plan = _UpsertPlan(
        records=unique, pmids=pmids, digests=digests, existing=set(stored), changed=changed, new_chunks=new_chunks,
        unchanged=unchanged, stale=[], embed=embed, seen=stored,
    )
    if not embed or not pmids:
        return plan
    embedder = get_embedder()
    # Chunks of a pending PMID are being replaced by the batch in flight, with current vectors.
    settled = [pmid for pmid in unchanged if pmid not in pending]
    plan.stale = list(
        AbstractChunk.objects.filter(abstract_id__in=settled)
        .exclude(embedding_model=embedder.spec.name, embedding_dim=embedder.spec.dimension, embedding__isnull=False)
        .only("id", "abstract_id", "ordinal", "title", "text")
    ) if settled else []
    for pmid in changed:
        for chunk in new_chunks[pmid]:
            plan.keys.append((pmid, chunk.ordinal))
            plan.texts.append(embedding_text(title=unique[pmid].title, chunk_text=chunk.text))
    for stale_chunk in plan.stale:
        plan.keys.append((stale_chunk.abstract_id, stale_chunk.ordinal))
        plan.texts.append(embedding_text(title=stale_chunk.title, chunk_text=stale_chunk.text))
    return plan


def _plan_vectors(plan: _UpsertPlan) -> _Vectors:
    """Embed the plan's texts, each distinct text once. Touches no database: it may run in another thread."""
    if not plan.texts:
        return _Vectors(by_chunk={})
    embedder = get_embedder()
    distinct = list(dict.fromkeys(plan.texts))
    matrix = embedder.embed(distinct)
    row = {text: index for index, text in enumerate(distinct)}
    return _Vectors(
        by_chunk={key: matrix[row[text]] for key, text in zip(plan.keys, plan.texts, strict=True)},
        model_name=embedder.spec.name,
        dimension=embedder.spec.dimension,
    )


def _chunks_copy(rows: list[tuple[str, int, str, str, str, str | None, str, int | None, str]]) -> None:
    """Insert chunk rows with one COPY (the tsvector column is generated by PostgreSQL)."""
    with connection.cursor() as cursor, cursor.cursor.copy(
        "COPY pubmed_abstractchunk (abstract_id, ordinal, section, title, text, embedding, embedding_model,"
        " embedding_dim, instructions_screened_by) FROM STDIN"
    ) as copy:
        for row in rows:
            copy.write_row(row)


def _take_over(plan: _UpsertPlan, vectors: _Vectors, pmids: list[str]) -> _Vectors:
    """Move `pmids` from unchanged to changed: chunk them and (if the plan embeds) embed them now.

    Rare (another writer changed these records between planning and writing), so embedding under
    the row locks is acceptable here.
    """
    taken = set(pmids)
    plan.unchanged = [pmid for pmid in plan.unchanged if pmid not in taken]
    plan.stale = [chunk for chunk in plan.stale if chunk.abstract_id not in taken]
    plan.changed = sorted({*plan.changed, *taken})
    extra = _UpsertPlan(
        records=plan.records, pmids=pmids, digests=plan.digests, existing=set(pmids), changed=pmids,
        new_chunks={}, unchanged=[], stale=[], embed=plan.embed,
    )
    for pmid in pmids:
        record = plan.records[pmid]
        plan.new_chunks[pmid] = chunk_abstract(title=record.title, sections=record.sections, abstract=record.abstract)
        for chunk in plan.new_chunks[pmid]:
            extra.keys.append((pmid, chunk.ordinal))
            extra.texts.append(embedding_text(title=record.title, chunk_text=chunk.text))
    if not plan.embed:
        return vectors
    added = _plan_vectors(extra)
    return _Vectors(
        by_chunk={**vectors.by_chunk, **added.by_chunk},
        model_name=vectors.model_name or added.model_name,
        dimension=vectors.dimension or added.dimension,
    )


def _upsert_write(plan: _UpsertPlan, vectors: _Vectors, *, source: str) -> UpsertResult:
    """Write the plan's abstracts and chunks in one transaction; a failure stores nothing."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            # The plan was made outside this transaction: lock the stored rows (in PMID order, like the
            # upsert below) and take over any record another writer changed since, so an "unchanged"
            # record never keeps chunks of the other writer's text under its own.
            cursor.execute(
                "SELECT pmid, content_hash FROM pubmed_abstract WHERE pmid = ANY(%s) ORDER BY pmid FOR UPDATE",
                [plan.pmids],
            )
            locked = dict(cursor.fetchall())
        drifted = [pmid for pmid in plan.unchanged if locked.get(pmid) != plan.seen.get(pmid)]
        if drifted:
            vectors = _take_over(plan, vectors, drifted)
        if vectors.dimension:
            vector_index_ensure(dimension=vectors.dimension)
        Abstract.objects.bulk_create(
            [_abstract_row(plan.records[pmid], source=source, digest=plan.digests[pmid]) for pmid in plan.pmids],
            update_conflicts=True,
            unique_fields=["pmid"],
            update_fields=_ABSTRACT_FIELDS,
            batch_size=500,
        )
        # Every changed PMID, not only those the plan saw stored: the plan was read outside this
        # transaction, and another writer may have stored the same new PMID since. The upsert above
        # holds the abstract rows' locks (in PMID order), so after this delete the chunks are ours alone.
        if plan.changed:
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM pubmed_abstractchunk WHERE abstract_id = ANY(%s)", [plan.changed])
        rows = []
        for pmid in plan.changed:
            title = plan.records[pmid].title
            for chunk in plan.new_chunks[pmid]:
                vector = vectors.by_chunk.get((pmid, chunk.ordinal))
                rows.append((
                    pmid, chunk.ordinal, chunk.section, title, chunk.text,
                    vector_literal(vector) if vector is not None else None,
                    vectors.model_name if vector is not None else "",
                    vectors.dimension if vector is not None else None,
                    screened_version(title, chunk.text),  # answers need not screen a free chunk again
                ))
        if rows:
            _chunks_copy(rows)
        for stale_chunk in plan.stale:
            stale_chunk.embedding = vectors.by_chunk[(stale_chunk.abstract_id, stale_chunk.ordinal)]
            stale_chunk.embedding_model = vectors.model_name
            stale_chunk.embedding_dim = vectors.dimension
        AbstractChunk.objects.bulk_update(
            plan.stale, ["embedding", "embedding_model", "embedding_dim"], batch_size=500
        )
    created = sum(1 for pmid in plan.pmids if pmid not in plan.existing)
    result = UpsertResult(
        created=created,
        updated=len(plan.changed) - created,
        unchanged=len(plan.unchanged),
        embedded=len(vectors.by_chunk),
        pmids=plan.pmids,
    )
    logger.info("abstracts_upserted", created=result.created, updated=result.updated,
                unchanged=result.unchanged, embedded=result.embedded)
    return result


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
    plan = _upsert_plan(records=records, embed=embed)
    if not plan.pmids:
        return UpsertResult()
    result = _upsert_write(plan, _plan_vectors(plan), source=source)
    if plan.changed:
        lexeme_stats_refresh_if_stale()
    return result


def abstracts_upsert_batches(
    *,
    batches: Iterable[Sequence[AbstractRecord]],
    embed: bool = True,
    source: str = AbstractSource.EFETCH,
) -> Iterator[UpsertResult]:
    """Upsert each batch as `abstracts_upsert` would, in order, yielding one result per batch.

    For bulk loads: while one batch is written, the next is already being embedded in a
    worker thread (ONNX Runtime releases the GIL while it runs), and reading the next batch
    (parsing, when `batches` is a parser's generator) overlaps the embedding too. Each batch is
    still its own transaction, so a failure keeps the batches already yielded. The lexeme
    statistics are refreshed once at the end rather than after every batch.
    """
    changed = False
    in_flight: tuple[_UpsertPlan, Future[_Vectors]] | None = None
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as executor:
            for batch in batches:
                plan = _upsert_plan(records=batch, embed=embed, pending=in_flight[0].digests if in_flight else None)
                if not plan.pmids:
                    continue
                vectors = executor.submit(_plan_vectors, plan)
                if in_flight is not None:
                    result = _upsert_write(in_flight[0], in_flight[1].result(), source=source)
                    changed = changed or bool(in_flight[0].changed)
                    yield result
                in_flight = (plan, vectors)
            if in_flight is not None:
                result = _upsert_write(in_flight[0], in_flight[1].result(), source=source)
                changed = changed or bool(in_flight[0].changed)
                yield result
    finally:
        if changed:
            lexeme_stats_refresh_if_stale()


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


def abstracts_flag_instructions(*, batch_size: int = 500) -> int:
    """Re-scan every stored abstract (and chunk) for sentences addressed to an AI; return how many are flagged.

    Upserts flag what they store; this is for the records stored before, or after the detector changed."""
    changed: list[Abstract] = []
    flagged = 0
    for row in Abstract.objects.only("pmid", "title", "abstract", "instruction_sentences").iterator(batch_size):
        found = instruction_sentences(row.title) + instruction_sentences(row.abstract)
        flagged += bool(found)
        if found != row.instruction_sentences:
            row.instruction_sentences, row.has_instructions = found, bool(found)
            changed.append(row)
    screened: list[AbstractChunk] = []  # chunks whose record of the current screening changes
    for chunk in AbstractChunk.objects.only("id", "title", "text", "instructions_screened_by").iterator(batch_size):
        version = screened_version(chunk.title, chunk.text)
        if version != chunk.instructions_screened_by:
            chunk.instructions_screened_by = version
            screened.append(chunk)
    with transaction.atomic():
        Abstract.objects.bulk_update(changed, ["instruction_sentences", "has_instructions"], batch_size=batch_size)
        AbstractChunk.objects.bulk_update(screened, ["instructions_screened_by"], batch_size=batch_size)
    return flagged
