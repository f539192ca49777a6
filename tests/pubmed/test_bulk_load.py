"""Streamed, resumable loads of PubMed baseline files (`load_abstracts FILE.xml.gz`), their faults and deletions."""

from __future__ import annotations

import gzip
import os
import re
import signal
import subprocess
import sys
from io import StringIO
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.common import write_baseline_file
from pubmed.chunking import chunk_abstract
from pubmed.models import Abstract, AbstractChunk, RecordFileLoad
from pubmed.parsers import RecordFile
from pubmed.services.bulk_load import file_sha256
from tests.conftest import BASE_DIR, database_url_for_subprocess

FIRST = 90_000_000


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("load_abstracts", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _pmids(start: int, count: int) -> list[str]:
    return [str(start + i) for i in range(count)]


def _gzip_xml(tmp_path: Path, name: str, body: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(body))
    return path


@pytest.fixture
def baseline(tmp_path: Path, shared_data: Path) -> Path:
    """A baseline-format file of 40 records (PMIDs 90000000-90000039) that ends by deleting 90000003 and 17284678."""
    path = tmp_path / "pubmed25n0001.xml.gz"
    write_baseline_file(path, count=40, first_pmid=FIRST, deleted_pmids=(str(FIRST + 3), "17284678"),
                        shared_data=shared_data)
    return path


@pytest.mark.django_db
def test_baseline_file_is_streamed_embedded_and_its_deletions_honoured(baseline: Path, eutils_dir: Path) -> None:
    _run(str(eutils_dir / "klortho-2012/efetch.pubmed.xml"), "--no-embed")  # stores 17284678, which PubMed deleted
    out, _ = _run(str(baseline), "--no-progress")
    chunks = sum(len(record_chunks) for record_chunks in chunk_records(baseline, *_pmids(FIRST, 40)))
    assert out.splitlines() == [
        f"{baseline.resolve()}: 40 record(s) (xml, gzip): 40 created, 0 updated, 0 unchanged, {chunks} chunk(s) "
        "embedded, 2 deleted of 2 PMID(s) listed in DeleteCitation.",
        f"Loaded 40 record(s) from 1 file(s): 40 created, 0 updated, 0 unchanged, {chunks} chunk(s) embedded, "
        "2 deleted (2 PMID(s) listed in DeleteCitation).",
    ]
    stored = set(Abstract.objects.values_list("pmid", flat=True))
    assert stored == (set(_pmids(FIRST, 40)) - {str(FIRST + 3)}) | {"9997"}
    assert not AbstractChunk.objects.exclude(abstract_id="9997").filter(embedding__isnull=True).exists()
    load = RecordFileLoad.objects.exclude(path__endswith="efetch.pubmed.xml").get()
    assert (load.status, load.position, load.records, load.deleted, load.sha256) == (
        "finished", 41, 40, 2, file_sha256(baseline)
    )
    record = Abstract.objects.get(pmid=str(FIRST + 1))
    assert record.source == "xml"
    assert record.title.endswith("(1).")


@pytest.mark.django_db
def test_a_finished_file_loaded_again_is_unchanged_and_not_embedded_again(baseline: Path) -> None:
    _run(str(baseline), "--no-progress")
    out, _ = _run(str(baseline), "--no-progress")
    # 90000003 was deleted at the end of the first load: the second one stores it again, then deletes it again.
    deleted_record_chunks = len(next(chunk_records(baseline, str(FIRST + 3))))
    assert out.splitlines()[-1] == (
        f"Loaded 40 record(s) from 1 file(s): 1 created, 0 updated, 39 unchanged, {deleted_record_chunks} chunk(s) "
        "embedded, 1 deleted (2 PMID(s) listed in DeleteCitation)."
    )


def chunk_records(path: Path, *pmids: str):  # type: ignore[no-untyped-def]
    """Yield the chunks of the given PMIDs' records in the file, as the store would cut them."""
    with RecordFile(path) as opened:
        for entry in opened.entries():
            if entry.record is not None and entry.record.pmid in pmids:
                yield chunk_abstract(title=entry.record.title, sections=entry.record.sections,
                                     abstract=entry.record.abstract)


@pytest.mark.django_db
def test_progress_lines_are_printed_without_a_terminal(baseline: Path) -> None:
    _, err = _run(str(baseline), "--no-embed", "--batch-size", "15", "--progress-every", "0")
    lines = [line.split(", ")[0] for line in err.splitlines()]
    assert lines == [
        "pubmed25n0001.xml.gz: 15 record(s) stored",
        "pubmed25n0001.xml.gz: 30 record(s) stored",
        "pubmed25n0001.xml.gz: 40 record(s) stored",
    ]
    assert "100% of the file read" in err.splitlines()[-1]


@pytest.mark.django_db(transaction=True)
def test_a_killed_load_resumes_after_its_last_stored_batch_without_embedding_again(baseline: Path) -> None:
    env = {**os.environ, "DATABASE_URL": database_url_for_subprocess(), "LOG_LEVEL": "WARNING",
           "CELERY_BROKER_URL": ""}
    child = subprocess.Popen(
        [sys.executable, "manage.py", "load_abstracts", str(baseline), "--batch-size", "5", "--progress-every", "0"],
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert child.stderr is not None
    try:
        for line in child.stderr:  # progress lines arrive after each stored batch
            if line.startswith("pubmed25n0001.xml.gz: 10 record(s) stored"):
                break
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    killed = RecordFileLoad.objects.get()
    assert killed.status == "running"
    assert killed.position >= 10
    stored_before = set(Abstract.objects.values_list("pmid", flat=True))
    assert stored_before == set(_pmids(FIRST, killed.position))
    chunk_ids_before = set(
        AbstractChunk.objects.exclude(abstract_id=str(FIRST + 3)).values_list("id", flat=True)
    )
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()

    out, _ = _run(str(baseline), "--no-progress")

    remaining = 40 - killed.position
    embedded = sum(len(chunks) for chunks in chunk_records(baseline, *_pmids(FIRST + killed.position, remaining)))
    assert out.splitlines()[0] == (
        f"{baseline.resolve()}: {remaining} record(s) (xml, gzip), resumed after entry {killed.position}: "
        f"{remaining} created, 0 updated, 0 unchanged, {embedded} chunk(s) embedded, 1 deleted of 2 PMID(s) listed "
        "in DeleteCitation."
    )
    # The chunks stored before the kill are the same rows, not written or embedded again.
    assert chunk_ids_before <= set(AbstractChunk.objects.values_list("id", flat=True))
    assert set(Abstract.objects.values_list("pmid", flat=True)) == set(_pmids(FIRST, 40)) - {str(FIRST + 3)}
    assert RecordFileLoad.objects.get().status == "finished"


@pytest.mark.parametrize(
    ("damage", "message", "kept"),
    [
        pytest.param(
            "truncate",
            r"pubmed25n0002\.xml\.gz: the gzip data ends early, after record (\d+) \(line \d+, PMID 900000\d\d\): "
            r"the file is truncated; download it again\.",
            "all before",
            id="truncated-gzip",
        ),
        pytest.param(
            "malformed",
            r"pubmed25n0002\.xml\.gz: Malformed XML: .* \(line \d+, after record 25 \(PMID 90000024\)\)\.",
            25,
            id="malformed-xml-mid-file",
        ),
        pytest.param(
            "no-pmid",
            r"pubmed25n0002\.xml\.gz: record 31 \(line \d+\): A PubmedArticle has no valid PMID \(found 'x1'\)\.",
            30,
            id="record-without-pmid",
        ),
    ],
)
@pytest.mark.django_db
def test_a_broken_baseline_file_names_file_and_record_and_keeps_what_came_before(
    tmp_path: Path, shared_data: Path, damage: str, message: str, kept: int | str
) -> None:
    source = tmp_path / "source.xml.gz"
    write_baseline_file(source, count=40, first_pmid=FIRST, shared_data=shared_data)
    xml = gzip.decompress(source.read_bytes())
    if damage == "truncate":
        compressed = source.read_bytes()
        broken = tmp_path / "pubmed25n0002.xml.gz"
        broken.write_bytes(compressed[: len(compressed) * 2 // 3])
    else:
        articles = xml.split(b"<PubmedArticle>")
        index = 26 if damage == "malformed" else 31  # 1-based: the 26th / 31st record
        if damage == "malformed":
            articles[index] = articles[index].replace(b"<Abstract>", b"<Abstract><oops", 1)
        else:
            articles[index] = articles[index].replace(f"<PMID Version=\"1\">{FIRST + 30}<".encode(),
                                                      b'<PMID Version="1">x1<', 1)
        broken = _gzip_xml(tmp_path, "pubmed25n0002.xml.gz", b"<PubmedArticle>".join(articles))
    with pytest.raises(CommandError) as raised:
        _run(str(broken), "--no-embed", "--batch-size", "7")
    text = str(raised.value)
    found = re.search(message, text)
    assert found, text
    stored = Abstract.objects.count()
    expected_kept = int(found.group(1)) if kept == "all before" else kept
    assert stored == expected_kept
    assert text.endswith(
        f"The {expected_kept:,} record(s) before it in this file are stored. Fix the file or download it again, "
        "then run the command again: stored records are not embedded again."
    )
    assert set(Abstract.objects.values_list("pmid", flat=True)) == set(_pmids(FIRST, expected_kept))
    load = RecordFileLoad.objects.get()
    assert (load.status, load.position) == ("failed", expected_kept)
    assert load.error == text.split(" The ")[0]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("pubmed25n0003.xml.gz", gzip.compress(b"\x89PNG\r\n\x1a\n\x00\x00"),
         "Malformed XML: Start tag expected, '<' not found (line 1, before the first record). Nothing was stored. "
         "Fix the file or download it again, then run the command again: stored records are not embedded again."),
        ("pubmed25n0004.xml.gz", gzip.compress(b"<html><body>502 Bad Gateway</body></html>"),
         "Expected a PubmedArticleSet, got <html>. Nothing was stored. Fix the file or download it again, then run "
         "the command again: stored records are not embedded again."),
        ("pubmed25n0005.xml.gz", b"\x1f\x8b\x08\x00garbage",
         "the gzip data ends early, before the first record: the file is truncated; download it again. "
         "Nothing was stored."),
        ("abstracts.bin", gzip.compress(b"just some words\n"),
         "cannot tell the format; expected PubMed XML (<PubmedArticleSet>), MEDLINE text ('PMID- ' lines) or JSONL "
         "({\"pmid\": ...} per line), plain or gzip-compressed. Nothing was stored."),
    ],
    ids=["png", "html-error-page", "not-really-gzip", "unknown-format"],
)
@pytest.mark.django_db
def test_a_file_of_the_wrong_kind_is_refused_with_a_precise_message(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CommandError) as raised:
        _run(str(path), "--no-embed")
    assert str(raised.value) == f"{path.resolve()}: {message}"
    assert Abstract.objects.count() == 0


@pytest.mark.django_db
def test_files_before_a_broken_one_stay_stored(eutils_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_bytes((eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_bytes()[:3000])
    with pytest.raises(CommandError) as raised:
        _run(str(eutils_dir / "klortho-2012/efetch.pubmed.xml"), str(broken), "--no-embed")
    assert re.fullmatch(
        rf"{re.escape(str(broken.resolve()))}: Malformed XML: .* \(line \d+, before the first record\)\. "
        r"The 1 file\(s\) before it are stored\. Fix the file or download it again, then run the command again: "
        r"stored records are not embedded again\.",
        str(raised.value),
    ), str(raised.value)
    assert set(Abstract.objects.values_list("pmid", flat=True)) == {"17284678", "9997"}


@pytest.mark.django_db
def test_a_file_another_process_is_loading_is_refused(baseline: Path) -> None:
    from pubmed.services import bulk_load

    key = int(file_sha256(baseline)[:8], 16) - (1 << 31)
    with psycopg.connect(database_url_for_subprocess(), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s, %s)", [bulk_load._LOCK_CLASS, key])
        with pytest.raises(CommandError) as raised:
            _run(str(baseline), "--no-embed")
    assert str(raised.value) == (
        f"{baseline.resolve()}: another process is loading this file right now; wait for it to finish (or stop it) "
        "and run again. Nothing was stored."
    )
    assert Abstract.objects.count() == 0


def test_queueing_without_a_broker_says_what_to_set(baseline: Path) -> None:
    with pytest.raises(CommandError) as raised:
        _run(str(baseline), "--queue")
    assert str(raised.value) == (
        "--queue needs CELERY_BROKER_URL (a Redis broker) and a worker consuming the queue 'celery' "
        "(celery -A config worker -Q celery); without them, run the command without --queue."
    )


def test_record_file_reads_the_compressed_file_in_step_with_the_records(tmp_path: Path, shared_data: Path) -> None:
    path = tmp_path / "pubmed25n0006.xml.gz"
    write_baseline_file(path, count=300, first_pmid=FIRST, shared_data=shared_data)
    seen = []
    with RecordFile(path) as opened:
        assert (opened.kind, opened.compressed) == ("xml", True)
        for entry in opened.entries():
            seen.append((entry.position, opened.bytes_read()))
    assert [position for position, _ in seen] == list(range(1, 301))
    # The file is read as the records are parsed, not up front: a progress bar over bytes can follow it.
    assert seen[0][1] < path.stat().st_size / 2
    assert seen[-1][1] == path.stat().st_size


@pytest.mark.django_db
def test_restart_loads_a_stopped_file_from_its_first_record(tmp_path: Path, shared_data: Path) -> None:
    source = tmp_path / "source.xml.gz"
    write_baseline_file(source, count=30, first_pmid=FIRST, shared_data=shared_data)
    articles = gzip.decompress(source.read_bytes()).split(b"<PubmedArticle>")
    articles[21] = articles[21].replace(b"<Abstract>", b"<Abstract><oops", 1)  # the 21st record is broken
    broken = _gzip_xml(tmp_path, "pubmed25n0007.xml.gz", b"<PubmedArticle>".join(articles))
    for _ in range(2):
        with pytest.raises(CommandError, match=r"The 20 record\(s\) before it in this file are stored\."):
            _run(str(broken), "--no-embed", "--batch-size", "8")
    assert RecordFileLoad.objects.get().resumed_after == 20  # the second run went straight to the broken record
    with pytest.raises(CommandError, match=r"The 20 record\(s\) before it in this file are stored\."):
        _run(str(broken), "--no-embed", "--batch-size", "8", "--restart")
    load = RecordFileLoad.objects.get()
    assert (load.resumed_after, load.records, load.unchanged, load.created) == (0, 20, 20, 0)


@pytest.mark.django_db(transaction=True)
def test_a_load_runs_at_lower_cpu_priority_and_so_does_its_database_backend(baseline: Path) -> None:
    # Answers served while a load embeds must keep the cores: the load and its (local) backend step back.
    env = {**os.environ, "DATABASE_URL": database_url_for_subprocess(), "LOG_LEVEL": "WARNING",
           "CELERY_BROKER_URL": "", "BULK_LOAD_NICE": "7"}
    from django.db import connection

    # Connections other tests of this session left open (live servers, browser threads) are not the load's.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        before = {row[0] for row in cursor.fetchall()}
    child = subprocess.Popen(
        [sys.executable, "manage.py", "load_abstracts", str(baseline), "--batch-size", "5", "--progress-every", "0"],
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    assert child.stderr is not None
    try:
        for line in child.stderr:
            if "record(s) stored" in line:
                break
        with connection.cursor() as cursor:  # this test's own backend, at normal priority
            cursor.execute("SELECT pg_backend_pid()")
            own_backend = cursor.fetchone()[0]
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'"
            )
            backends = [row[0] for row in cursor.fetchall() if row[0] not in before]
            priorities = {
                "load": os.getpriority(os.PRIO_PROCESS, child.pid),
                "backends": sorted({os.getpriority(os.PRIO_PROCESS, pid) for pid in backends}),
            }
            normal = os.getpriority(os.PRIO_PROCESS, own_backend)
    finally:
        child.kill()
        child.wait(30)
    assert priorities == {"load": min(os.getpriority(os.PRIO_PROCESS, 0) + 7, 19), "backends": [min(normal + 7, 19)]}
