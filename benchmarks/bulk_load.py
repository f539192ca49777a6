"""Bulk load of PubMed baseline files: abstracts/s, CPU-seconds and peak memory, streamed against whole-file.

No real baseline file is available offline, so the script writes baseline-format files
(`pubmed25nNNNN.xml.gz`: gzip, PubmedArticleSet, DOCTYPE, a DeleteCitation at the end) from the recorded
efetch articles and the PubMedQA abstracts with synthetic PMIDs (`benchmarks.common.write_baseline_file`),
at each of `--sizes` records. Every load runs in a child process of its own, so its peak RSS (from
`wait4`) is its own:

- streamed: `manage.py load_abstracts FILE` - iterparse, batches of 200, a checkpoint per batch;
- whole-file (the same-run baseline, how `load_abstracts` worked before): decompress and parse the whole
  file into a list of records, then upsert the same batches.

Both run without embedding (`--no-embed`: parse, chunk, store), so the numbers are about the loading and
not the model; `--embed-sizes` adds streamed runs with embedding. `--resume` kills a streamed load of the
largest file half-way and measures the run that resumes it. CPU-seconds are the loader's plus the
PostgreSQL server's (its postmaster's reaped children and live backends), which other programs on the
shared machine barely change. Database `medcite_bench_bulk`.

    .venv/bin/python benchmarks/bulk_load.py [--sizes 3000,30000] [--embed-sizes 1000] [--resume] [--database NAME]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import BASE_DIR, load_summary, setup_django, write_baseline_file

DATABASE = "medcite_bench_bulk"

# The pre-streaming load path, for the same-run baseline: the whole file in memory, then the same batches.
_WHOLE_FILE = """
import gzip, sys, django
django.setup()
from pubmed.parsers import parse_pubmed_xml
from pubmed.services.store import abstracts_upsert
records = parse_pubmed_xml(gzip.decompress(open(sys.argv[1], "rb").read()))
for start in range(0, len(records), 200):
    abstracts_upsert(records=records[start:start + 200], embed=False, source="xml")
print(len(records))
"""


@dataclass(frozen=True)
class Run:
    label: str
    records: int
    wall: float
    loader_cpu: float
    database_cpu: float
    peak_rss_mb: float
    exit_code: int

    @property
    def cpu(self) -> float:
        return self.loader_cpu + self.database_cpu


def _postgres_cpu_seconds() -> float:
    """CPU seconds used by this database server so far: the postmaster, its reaped children and its live ones."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT setting FROM pg_settings WHERE name = 'data_directory'")
        data_dir = Path(cursor.fetchone()[0])
    try:
        postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if pid == postmaster:
            total += sum(int(value) for value in fields[11:15]) / tick  # utime, stime, cutime, cstime
        elif ppid == postmaster:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _empty_store() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE pubmed_abstractchunk, pubmed_abstract, pubmed_recordfileload, pubmed_lexemestat")


def _child(label: str, command: list[str], *, records: int, kill_after_records: int = 0) -> Run:
    """Run `command` as a child process; return its wall time, CPU (its own and the database's) and peak RSS."""
    from django.db import connection

    connection.close()  # the database's CPU is counted from its processes; this process holds no backend meanwhile
    database_started = _postgres_cpu_seconds()
    connection.close()
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=BASE_DIR, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE if kill_after_records else subprocess.DEVNULL, text=True)
    if kill_after_records and process.stderr is not None:
        for line in process.stderr:  # load_abstracts --progress-every 0 prints a line after every batch
            stored = line.split(": ", 1)[-1].split(" record(s) stored")[0].replace(",", "")
            if stored.isdigit() and int(stored) >= kill_after_records:
                process.send_signal(signal.SIGKILL)
                break
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    database_cpu = _postgres_cpu_seconds() - database_started
    connection.close()
    return Run(label=label, records=records, wall=wall, loader_cpu=usage.ru_utime + usage.ru_stime,
               database_cpu=database_cpu, peak_rss_mb=usage.ru_maxrss / 1024, exit_code=process.returncode)


def _stored_count() -> int:
    from pubmed.models import Abstract

    return Abstract.objects.count()


def _print(run: Run) -> None:
    print(
        f"| {run.label} | {run.records:,} | {run.wall:.1f} | {run.records / run.wall:,.0f} | "
        f"{run.loader_cpu:.1f} + {run.database_cpu:.1f} | {run.records / max(run.cpu, 1e-9):,.0f} | "
        f"{run.peak_rss_mb:,.0f} |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="3000,30000", help="records per generated file (default 3000,30000)")
    parser.add_argument("--embed-sizes", default="", help="sizes also loaded with embedding (default: none)")
    parser.add_argument("--resume", action="store_true", help="kill the largest streamed load half-way and resume it")
    parser.add_argument("--skip-baseline", action="store_true", help="only the streamed loads")
    parser.add_argument("--database", default=DATABASE, help=f"benchmark database (default {DATABASE})")
    args = parser.parse_args()
    setup_django(database=args.database)
    sizes = [int(size) for size in args.sizes.split(",") if size]
    embed_sizes = [int(size) for size in args.embed_sizes.split(",") if size]
    python = sys.executable
    print(f"Bulk load benchmark - baseline-format files of {', '.join(f'{s:,}' for s in sizes)} records")
    print(f"start: {load_summary()}")
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for number, size in enumerate(sorted(set(sizes + embed_sizes)), start=1):
            path = Path(tmp) / f"pubmed25n{number:04d}.xml.gz"
            started = time.perf_counter()
            # The file ends by deleting 10 of its own PMIDs, as update files do.
            write_baseline_file(path, count=size, deleted_pmids=tuple(str(90_000_000 + i) for i in range(0, 100, 10)))
            files[size] = path
            print(f"  wrote {path.name}: {size:,} records, {path.stat().st_size / 1e6:.1f} MB gzip "
                  f"in {time.perf_counter() - started:.1f} s")
        print()
        print("| load | records | wall s | abstracts/s | CPU s (loader + PostgreSQL) | abstracts per CPU-second | "
              "peak RSS MB |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        manage = [python, "manage.py", "load_abstracts"]
        for size in sizes:
            if not args.skip_baseline:
                _empty_store()
                _print(_child(f"whole-file (before), no embedding, {size:,}", [python, "-c", _WHOLE_FILE,
                                                                                 str(files[size])], records=size))
            _empty_store()
            _print(_child(f"streamed, no embedding, {size:,}", [*manage, str(files[size]), "--no-embed",
                                                                "--no-progress"], records=size))
        for size in embed_sizes:
            _empty_store()
            _print(_child(f"streamed, with embedding, {size:,}", [*manage, str(files[size]), "--no-progress"],
                          records=size))
        if args.resume:
            size = max(sizes)
            _empty_store()
            killed = _child(f"streamed, no embedding, killed at ~50 %, {size:,}",
                            [*manage, str(files[size]), "--no-embed", "--progress-every", "0"],
                            records=size // 2, kill_after_records=size // 2)
            stored = _stored_count()
            _print(Run(killed.label, stored, killed.wall, killed.loader_cpu, killed.database_cpu,
                       killed.peak_rss_mb, killed.exit_code))
            resumed = _child(f"streamed, no embedding, resumed after {stored:,}", [*manage, str(files[size]),
                                                                                   "--no-embed", "--no-progress"],
                             records=size - stored)
            _print(resumed)
            print(f"\nkilled run exit code {killed.exit_code}; stored after the resume: {_stored_count():,} "
                  f"(expected {size - 10:,}: the file deletes 10 of its own PMIDs)")
    print(f"\nfinished: {load_summary()}")


if __name__ == "__main__":
    main()
