"""Load record files of any size into the store, streamed, in batches, resumable after a kill or a crash.

One file is one `RecordFileLoad` (keyed by the file's sha256). Records are upserted in batches through
`abstracts_upsert_batches` (the next batch is parsed and embedded while the previous one is written);
after each batch the load's `position` (entries of the file stored) is saved. A load
that stopped - killed, crashed, or refused at a broken record - continues after `position` when the file
is loaded again. Should the process die between a batch's commit and saving `position`, that batch is
upserted again on resume: its records are unchanged, so they are neither duplicated nor embedded again.

`DeleteCitation` entries (PubMed's list of withdrawn or merged PMIDs, found at the end of update and some
baseline files) are honoured in file order: those PMIDs leave the store, so an answer can no longer cite
a record PubMed has removed. A PMID deleted and then given again later in the file stays stored.

Two processes never load the same file at once: a session advisory lock keyed by the file's content is
held for the whole load, and the second process is told so (`RecordFileBusy`).

A load must not starve the answers served meanwhile: it runs at a lower CPU priority (`BULK_LOAD_NICE`),
and so does its PostgreSQL backend when the database runs on this machine (the embedded server), since
the backend's share - inserting each batch's vectors into the HNSW index - is a large part of the load's
CPU. Each batch is its own short transaction, and nothing the answer path reads is locked for long.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import structlog
from django.conf import settings
from django.db import connection, reset_queries
from django.db.models import F
from django.utils import timezone

from pubmed.models import Abstract, AbstractSource, RecordFileLoad, RecordFileLoadStatus
from pubmed.parsers import AbstractRecord, PubmedParseError, RecordFile
from pubmed.parsers.records import RecordEntry
from pubmed.services.store import abstracts_upsert_batches

logger = structlog.get_logger(__name__)

SOURCES = {"xml": AbstractSource.XML_FILE, "medline": AbstractSource.MEDLINE_FILE, "jsonl": AbstractSource.JSONL_FILE}
DEFAULT_BATCH_SIZE = 200
# First half of the two-integer advisory lock key ("MCFL"), so file locks cannot collide with other advisory locks.
_LOCK_CLASS = 0x4D43464C

# Called after every stored batch with the load so far, the bytes of the file read and its size on disk.
LoadProgress = Callable[[RecordFileLoad, int, int], None]


@dataclass(frozen=True)
class FileLoadRun:
    """What one run of a file's load did (a resumed run counts only its own part), and the load itself."""

    load: RecordFileLoad
    records: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    embedded: int = 0
    deletions_listed: int = 0
    deleted: int = 0


COUNTS = ("records", "created", "updated", "unchanged", "embedded", "deletions_listed", "deleted")


def _run_of(load: RecordFileLoad, before: dict[str, int]) -> FileLoadRun:
    return FileLoadRun(load=load, **{name: getattr(load, name) - before[name] for name in COUNTS})


class RecordFileBusy(RuntimeError):
    """Another process is loading the same file right now."""


class RecordFileLoadFailed(PubmedParseError):
    """The file is broken at some record; everything before it is stored (`load` says how much)."""

    def __init__(self, message: str, *, run: FileLoadRun) -> None:
        super().__init__(message)
        self.run = run
        self.load = run.load


def file_sha256(path: Path) -> str:
    """Return the sha256 of the file's bytes on disk, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def _exclusive(sha256: str, path: Path) -> Iterator[None]:
    key = int(sha256[:8], 16) - (1 << 31)  # a signed 32-bit integer
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_LOCK_CLASS, key])
        if not cursor.fetchone()[0]:
            holder = RecordFileLoad.objects.filter(sha256=sha256).values_list("worker", flat=True).first()
            raise RecordFileBusy(
                f"{path}: another process{f' ({holder})' if holder else ''} is loading this file right now; "
                "wait for it to finish (or stop it) and run again."
            )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_LOCK_CLASS, key])


_LOWERED: set[int] = set()  # process and backend ids already lowered (a nice increment adds up)


def bulk_load_lower_priority() -> None:
    """Lower this process's CPU priority by `BULK_LOAD_NICE`, and its database backend's when it is local.

    The backend is reniced only when the database is reached through a Unix socket (the embedded server,
    or PostgreSQL on this machine): a backend pid over TCP may name a process on another host. Failures
    are logged, never raised: the load goes on at normal priority.
    """
    increment = settings.BULK_LOAD_NICE
    if not increment:
        return
    targets = [os.getpid()]
    host = connection.settings_dict.get("HOST") or connection.settings_dict.get("OPTIONS", {}).get("host", "")
    if not host or str(host).startswith("/"):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            targets.append(int(cursor.fetchone()[0]))
    for pid in targets:
        if pid in _LOWERED:
            continue
        try:
            current = os.getpriority(os.PRIO_PROCESS, pid)
            os.setpriority(os.PRIO_PROCESS, pid, min(current + increment, 19))
        except OSError as exc:
            logger.warning("bulk_load_priority_unchanged", pid=pid, error=str(exc))
        else:
            _LOWERED.add(pid)


def _start(*, path: Path, sha256: str, size: int, restart: bool) -> RecordFileLoad:
    load, created = RecordFileLoad.objects.get_or_create(
        sha256=sha256, defaults={"path": str(path), "size": size, "kind": ""}
    )
    fresh = created or restart or load.status == RecordFileLoadStatus.FINISHED
    if fresh:
        for field in ("position", *COUNTS):
            setattr(load, field, 0)
        load.started_at = timezone.now()
    load.resumed_after = load.position
    load.path, load.size, load.status, load.error, load.finished_at = (
        str(path), size, RecordFileLoadStatus.RUNNING, "", None
    )
    load.worker = f"{socket.gethostname()}:{os.getpid()}"
    load.save()
    return load


def _batches(
    entries: Iterator[RecordEntry], *, size: int, stored: list[tuple[int, int]], stop: list[RecordEntry | Exception]
) -> Iterator[list[AbstractRecord]]:
    """Yield batches of records up to the next deletion or broken record, which is left in `stop`.

    For each batch, (position of its last entry, its record count) is appended to `stored`, for the caller
    to save as each batch is written. A broken record ends the batches normally, so the batch in flight is
    still written before the caller reports the error.
    """
    batch: list[AbstractRecord] = []
    position = 0
    try:
        for entry in entries:
            if entry.record is None:
                stop.append(entry)
                break
            batch.append(entry.record)
            position = entry.position
            if len(batch) >= size:
                stored.append((position, len(batch)))
                yield batch
                batch = []
    except PubmedParseError as exc:
        stop.append(exc)
    if batch:
        stored.append((position, len(batch)))
        yield batch


def _store_until_stop(
    load: RecordFileLoad, entries: Iterator[RecordEntry], *, size: int, embed: bool,
    opened: RecordFile, progress: LoadProgress | None,
) -> RecordEntry | Exception | None:
    """Store the records up to the next deletion or broken record; return that (None at the end of the file)."""
    stored: list[tuple[int, int]] = []
    stop: list[RecordEntry | Exception] = []
    batches = _batches(entries, size=size, stored=stored, stop=stop)
    for result in abstracts_upsert_batches(batches=batches, embed=embed, source=SOURCES[load.kind]):
        position, records = stored.pop(0)
        _advance(load, position=position, records=records, created=result.created, updated=result.updated,
                 unchanged=result.unchanged, embedded=result.embedded)
        # With DEBUG on, Django keeps the text of every query (up to 9,000 of them, each batch's COPY carrying
        # all its rows): memory would grow with the file instead of staying flat.
        reset_queries()
        if progress and stored:  # the last batch of the file is reported by the caller, at 100% read
            progress(load, opened.bytes_read(), opened.size)
    return stop[0] if stop else None


def _advance(load: RecordFileLoad, *, position: int, **counts: int) -> None:
    """Record that the file's entries up to `position` are stored, adding `counts` to the load's totals."""
    RecordFileLoad.objects.filter(pk=load.pk).update(
        position=position, **{name: F(name) + value for name, value in counts.items()}
    )
    load.position = position
    for name, value in counts.items():
        setattr(load, name, getattr(load, name) + value)


def record_file_load(
    *,
    path: Path,
    batch_size: int = DEFAULT_BATCH_SIZE,
    embed: bool = True,
    restart: bool = False,
    progress: LoadProgress | None = None,
) -> FileLoadRun:
    """Load one record file (PubMed XML, MEDLINE text or JSONL; plain or gzip) into the store; return this run.

    Resumes an interrupted load of the same file unless `restart`; the counts returned are this run's.
    Raises RecordFileBusy when another process loads the file, PubmedParseError when it cannot be opened
    or its format cannot be told (nothing stored), and RecordFileLoadFailed when a record is broken: the
    records before it are stored first.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1.")
    bulk_load_lower_priority()
    path = path.resolve()
    sha256 = file_sha256(path)
    with RecordFile(path) as opened, _exclusive(sha256, path):
        load = _start(path=path, sha256=sha256, size=opened.size, restart=restart)
        RecordFileLoad.objects.filter(pk=load.pk).update(kind=opened.kind)
        load.kind = opened.kind
        resume_after = load.position
        before = {name: getattr(load, name) for name in COUNTS}
        if resume_after:
            logger.info("record_file_resumed", path=str(path), after_entry=resume_after)
        entries = (entry for entry in opened.entries() if entry.position > resume_after)
        try:
            while (stop := _store_until_stop(
                load, entries, size=batch_size, embed=embed, opened=opened, progress=progress
            )) is not None:
                if isinstance(stop, Exception):  # everything before the broken record is stored
                    _finish(load, status=RecordFileLoadStatus.FAILED, error=str(stop))
                    raise RecordFileLoadFailed(str(stop), run=_run_of(load, before)) from stop
                _delete_listed(load, stop.deleted_pmids, position=stop.position)
        except RecordFileLoadFailed:
            raise
        except BaseException as exc:
            _finish(load, status=RecordFileLoadStatus.RUNNING, error=f"interrupted: {type(exc).__name__}: {exc}")
            raise
        _finish(load, status=RecordFileLoadStatus.FINISHED, error="")
        if progress:
            progress(load, opened.size, opened.size)
    run = _run_of(load, before)
    logger.info("record_file_loaded", path=str(path), records=run.records, created=run.created,
                embedded=run.embedded, deleted=run.deleted, resumed_after=resume_after)
    return run


def _delete_listed(load: RecordFileLoad, pmids: tuple[str, ...], *, position: int) -> None:
    _, per_model = Abstract.objects.filter(pmid__in=pmids).delete()
    _advance(load, position=position, deletions_listed=len(pmids), deleted=per_model.get("pubmed.Abstract", 0))


def _finish(load: RecordFileLoad, *, status: str, error: str) -> None:
    load.status, load.error = status, error
    load.finished_at = timezone.now() if status != RecordFileLoadStatus.RUNNING else None
    RecordFileLoad.objects.filter(pk=load.pk).update(status=status, error=error, finished_at=load.finished_at)
