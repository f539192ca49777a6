"""One Evidence Scout run end to end against a fake NCBI E-utilities over the PubMedQA corpus, at 3 requests/s.

The fake server (tests/pubmed/corpus.py) evaluates the scout's PubMed queries over the 1,000 PubMedQA
abstracts plus the recorded efetch articles and serves their efetch XML; the E-utilities client goes
through the real rate limiter with NCBI's keyless budget (3 requests/s, one-second window plus the
0.1 s margin). Reported: wall time by stage, requests sent per endpoint, and the share of the run
spent waiting on the rate limiter. A cold run (nothing stored or cached) is followed by a warm rerun
(abstracts stored, esearch answers and normalisations cached). No LLM (the deterministic path).

Uses its own database (`medcite_bench_scout`), never the development database.

    .venv/bin/python benchmarks/scout.py [--drug insulin] [--disease diabetes] [--max-pmids 500] [--no-profile]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import SHARED_DATA, load_summary, setup_django

PROFILE = {
    "synonyms": ["insulin glargine", "insulin therapy"],
    "targets": ["INSR"],
    "mechanisms": ["glucose uptake"],
    "atc_codes": ["A10A"],
    "atc_descriptions": ["insulins and analogues"],
    "drug_type": "protein",
}


class TimedLimiter:
    """Wrap a rate limiter and add up the time callers spend blocked in `acquire`."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.limit = inner.limit
        self.window_seconds = inner.window_seconds
        self.waited = 0.0
        self.calls = 0

    def acquire(self) -> None:
        started = time.perf_counter()
        self.inner.acquire()
        self.waited += time.perf_counter() - started
        self.calls += 1


def _reset() -> None:
    from pubmed.models import Abstract, EsearchCacheEntry, ScoutCacheEntry, SearchQuery
    from research.models import ScoutRun

    for model in (ScoutRun, SearchQuery, ScoutCacheEntry, EsearchCacheEntry, Abstract):
        model.objects.all().delete()


def _run(args: argparse.Namespace, fake: Any, label: str) -> dict[str, Any]:
    from django.conf import settings

    from pubmed.clients import EutilsClient
    from pubmed.ratelimit import PostgresRateLimiter
    from research.scout.pipeline import STAGES, scout_run_execute
    from research.scout.runs import check_scout_input, scout_run_create

    # NCBI's keyless budget through the PostgreSQL window (the product's default without Redis), on a budget
    # of this run's own so nothing else on the machine competes for it.
    limiter = TimedLimiter(PostgresRateLimiter(budget=f"bench-scout-{label}-{time.time_ns()}", limit=3,
                                               window_seconds=1.0 + settings.NCBI_RATE_LIMIT_MARGIN_SECONDS))
    client = EutilsClient(base_url=settings.NCBI_EUTILS_BASE_URL, tool="medcite-bench", limiter=limiter,
                          max_retries=2, backoff_initial=0.05, backoff_max=0.2)
    cleaned = check_scout_input(drug=args.drug, disease=args.disease, profile=None if args.no_profile else PROFILE,
                                max_pmids=args.max_pmids)
    run = scout_run_create(user=None, enqueue=False, **cleaned)
    fake.seen.clear()
    started = time.perf_counter()
    run = scout_run_execute(run_id=str(run.pk), client=client)
    wall = time.perf_counter() - started
    requests: dict[str, int] = {}
    for _, endpoint, _ in fake.seen:
        requests[endpoint] = requests.get(endpoint, 0) + 1
    result = run.result or {}
    stages = {key: run.state[key]["seconds"] for key, _ in STAGES}
    report = {
        "run": label,
        "wall_seconds": round(wall, 2),
        "stages": stages,
        "fetch_breakdown": run.state["fetch"]["timings"],
        "requests": requests,
        "requests_total": sum(requests.values()),
        "rate_limit_wait_seconds": round(limiter.waited, 2),
        "rate_limit_wait_share": round(limiter.waited / wall, 3) if wall else 0.0,
        "queries": len(result.get("queries", [])),
        "pmids": result.get("pmid_count"),
        "new_abstracts": result.get("new_abstracts"),
        "reranker": result.get("reranker"),
        "strength": result.get("strength"),
        "findings": len(result.get("key_findings", [])),
    }
    print(f"\n{label} run: {report['wall_seconds']} s wall, {report['requests_total']} requests {requests}, "
          f"waiting on the rate limit {report['rate_limit_wait_seconds']} s ({report['rate_limit_wait_share']:.0%})")
    print(f"  fetch = esearch {report['fetch_breakdown']['esearch']} s + efetch, parse, embed and store "
          f"{report['fetch_breakdown']['efetch_store']} s")
    for key, label_ in STAGES:
        print(f"  {label_:<40} {stages[key]:7.2f} s   {next(s['detail'] for s in run.steps if s['key'] == key)}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drug", default="insulin")
    parser.add_argument("--disease", default="diabetes")
    parser.add_argument("--max-pmids", type=int, default=500)
    parser.add_argument("--no-profile", action="store_true", help="Run without the drug profile.")
    parser.add_argument("--json", action="store_true", help="Print the reports as JSON at the end.")
    args = parser.parse_args()

    setup_django(database="medcite_bench_scout")
    from django.conf import settings
    from django.core.management import call_command
    from pytest_httpserver import HTTPServer

    from tests.pubmed.corpus import Corpus, CorpusEutils

    call_command("migrate", verbosity=0)
    print(load_summary())
    corpus = Corpus.build(
        efetch_files=sorted(p for p in (SHARED_DATA / "eutils").rglob("*.xml") if "efetch" in str(p)),
        pubmedqa=SHARED_DATA / "pubmedqa" / "ori_pqal.json",
    )
    print(f"corpus: {len(corpus.records)} abstracts; drug {args.drug!r}, disease {args.disease!r}, "
          f"profile {'none' if args.no_profile else 'given'}, max {args.max_pmids} PMIDs per query")
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        fake = CorpusEutils(corpus=corpus).serve(server)
        settings.NCBI_EUTILS_BASE_URL = server.url_for("/")
        settings.LLM_PROVIDER = "extractive"
        settings.ANSWER_SETTINGS = {}
        from pubmed.embeddings import get_embedder

        get_embedder()  # model loading is not part of a run
        _reset()
        reports = [_run(args, fake, "cold"), _run(args, fake, "warm")]
    finally:
        server.clear()
        server.stop()
    print(load_summary())
    if args.json:
        print(json.dumps(reports, indent=2))


if __name__ == "__main__":
    main()
