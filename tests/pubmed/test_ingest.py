"""fetch_and_cache, the esearch cache, ingestion jobs and the Celery task, against the fake NCBI."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from werkzeug import Request, Response

from pubmed.clients import EFETCH_BATCH_SIZE, EutilsError
from pubmed.models import Abstract, AbstractChunk, EsearchCacheEntry, Ingestion, IngestionStatus
from pubmed.services import ingest
from pubmed.services.ingest import (
    IngestionInputError,
    abstracts_ensure,
    esearch_cached,
    fetch_and_cache,
    ingestion_create,
    ingestion_run,
)
from pubmed.tasks import purge_expired_esearch_cache_task
from tests.pubmed.conftest import FakeEutils
from tests.pubmed.corpus import Corpus, CorpusEutils

pytestmark = pytest.mark.django_db

COVID = ["31978945", "32887691", "33515491"]
MELANOMA = ["22663011", "28495875"]


def test_fetch_and_cache_stores_new_records_and_returns_all_pmids(fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"covid": COVID, "melanoma": [*MELANOMA, COVID[0]]}
    fake_eutils.serve()
    progress: list[tuple[int, int]] = []
    outcome = fetch_and_cache(
        queries=["covid", "melanoma"], max_per_query=20, progress=lambda done, total: progress.append((done, total))
    )
    assert outcome.pmids == [*COVID, *MELANOMA]
    assert (outcome.found, outcome.new, outcome.failed, outcome.errors) == (5, 5, [], [])
    assert outcome.per_query == {"covid": COVID, "melanoma": [*MELANOMA, COVID[0]]}
    assert outcome.embedded == AbstractChunk.objects.count() > 5
    assert sorted(Abstract.objects.values_list("pmid", flat=True)) == sorted([*COVID, *MELANOMA])
    assert progress == [(0, 5), (5, 5)]
    (efetch,) = fake_eutils.requests("/efetch.fcgi")
    assert efetch.params["id"] == ",".join([*COVID, *MELANOMA])


def test_rerunning_is_idempotent_and_costs_no_request(fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"covid": COVID}
    fake_eutils.serve()
    fetch_and_cache(queries=["covid"])
    chunks = list(AbstractChunk.objects.order_by("id").values_list("id", flat=True))
    requests_before = len(fake_eutils.seen)
    again = fetch_and_cache(queries=["covid"])
    assert (again.pmids, again.found, again.new, again.embedded) == (COVID, 3, 0, 0)
    assert len(fake_eutils.seen) == requests_before  # esearch cached, nothing left to efetch
    assert list(AbstractChunk.objects.order_by("id").values_list("id", flat=True)) == chunks


def test_esearch_cache_expires(fake_eutils: FakeEutils, settings: object) -> None:
    fake_eutils.esearch_ids = {"covid": COVID}
    fake_eutils.serve()
    assert esearch_cached(term="covid").pmids == COVID
    assert esearch_cached(term="  covid ").pmids == COVID
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1
    assert purge_expired_esearch_cache_task() == 0  # a live answer is kept
    EsearchCacheEntry.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    # Celery beat deletes expired answers hourly with this task.
    assert settings.CELERY_BEAT_SCHEDULE["purge-expired-esearch-cache"]["task"] == (
        "pubmed.tasks.purge_expired_esearch_cache_task"
    )
    assert purge_expired_esearch_cache_task() == 1
    assert not EsearchCacheEntry.objects.exists()
    assert esearch_cached(term="covid").count == 3
    assert len(fake_eutils.requests("/esearch.fcgi")) == 2
    entry = EsearchCacheEntry.objects.get()
    ttl = (entry.expires_at - entry.fetched_at).total_seconds()
    assert ttl == settings.NCBI_ESEARCH_CACHE_TTL_SECONDS


def test_malformed_efetch_stores_nothing_and_reports_clearly(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    fake_eutils.esearch_ids = {"melanoma": ["22663011"]}
    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(fake_eutils.esearch_handler)
    data = (eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_bytes()
    fake_eutils.respond("/efetch.fcgi", data[:-200], content_type="text/xml")
    outcome = fetch_and_cache(queries=["melanoma"])
    assert outcome.new == 0
    assert outcome.failed == ["22663011"]
    (error,) = outcome.errors
    assert error.startswith(
        "efetch 1 PMID(s) from 22663011: NCBI efetch for 1 PMID(s) starting 22663011 returned unusable XML: "
        "Malformed XML"
    )
    assert Abstract.objects.count() == 0
    assert AbstractChunk.objects.count() == 0


def test_a_failed_batch_keeps_finished_batches_and_a_rerun_fetches_only_the_rest(
    fake_eutils: FakeEutils, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "EFETCH_BATCH_SIZE", 2)
    fake_eutils.esearch_ids = {"covid": [*COVID, *MELANOMA]}  # batches: 2 + 2 + 1 PMIDs
    fake_eutils.server.expect_request("/esearch.fcgi").respond_with_handler(fake_eutils.esearch_handler)
    broken = {"on": True}

    def second_batch_breaks(request: Request) -> Response:
        if broken["on"] and COVID[2] in request.args.get("id", ""):
            fake_eutils.record(request)
            return Response("upstream timeout", status=504)
        return fake_eutils.efetch_handler(request)

    fake_eutils.server.expect_request("/efetch.fcgi").respond_with_handler(second_batch_breaks)
    first = fetch_and_cache(queries=["covid"])
    assert (first.found, first.new, first.failed) == (5, 3, [COVID[2], MELANOMA[0]])
    assert first.errors[0].startswith(
        f"efetch 2 PMID(s) from {COVID[2]}: NCBI E-utilities efetch.fcgi failed after 4 attempts"
    )
    assert set(Abstract.objects.values_list("pmid", flat=True)) == {COVID[0], COVID[1], MELANOMA[1]}
    broken["on"] = False
    second = fetch_and_cache(queries=["covid"])
    assert (second.new, second.failed, second.errors) == (2, [], [])
    assert fake_eutils.requests("/efetch.fcgi")[-1].params["id"] == f"{COVID[2]},{MELANOMA[0]}"
    assert Abstract.objects.count() == 5


def test_pmids_ncbi_does_not_return_are_reported_failed(fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"mixed": ["22663011", "40999999"]}
    fake_eutils.serve()
    outcome = fetch_and_cache(queries=["mixed"])
    assert (outcome.new, outcome.failed) == (1, ["40999999"])
    assert outcome.errors == ["NCBI returned no record for 1 PMID(s): 40999999"]


def test_ncbi_down_is_reported_per_query(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "Service Unavailable", status=503, content_type="text/plain")
    outcome = fetch_and_cache(queries=["covid"])
    assert outcome.found == 0
    assert outcome.unavailable is True
    assert outcome.errors == [
        "esearch 'covid': NCBI E-utilities esearch.fcgi failed after 4 attempts; last error: "
        "HTTP 503: Service Unavailable"
    ]


@pytest.mark.parametrize(
    ("queries", "max_per_query", "message"),
    [
        ([], 20, 'Give at least one non-empty PubMed query, e.g. "metformin AND breast cancer".'),
        (["  "], 20, 'Give at least one non-empty PubMed query, e.g. "metformin AND breast cancer".'),
        ("covid", 20, "queries must be a list of PubMed queries, not a single string."),
        (["covid"], 0, "max_per_query must be between 1 and 500; got 0."),
        ([f"q{i}" for i in range(21)], 20, "At most 20 queries per ingestion; got 21."),
    ],
)
def test_bad_ingestion_input(queries: object, max_per_query: int, message: str) -> None:
    with pytest.raises(IngestionInputError) as excinfo:
        fetch_and_cache(queries=queries, max_per_query=max_per_query)  # type: ignore[arg-type]
    assert str(excinfo.value) == message


def test_abstracts_ensure_fetches_only_missing_and_keeps_order(fake_eutils: FakeEutils) -> None:
    fake_eutils.serve()
    abstracts_ensure(pmids=["22663011"])
    found = abstracts_ensure(pmids=["31978945", "22663011", "40999999"])
    assert [a.pmid for a in found] == ["31978945", "22663011"]
    assert [c.params["id"] for c in fake_eutils.requests("/efetch.fcgi")] == ["22663011", "31978945,40999999"]
    with pytest.raises(ValueError, match=r"Not PMIDs: 'PMC123'; use digits only"):
        abstracts_ensure(pmids=["PMC123"])


def test_ingestion_job_records_counts_and_timings(fake_eutils: FakeEutils, django_user_model: object) -> None:
    fake_eutils.esearch_ids = {"covid": COVID}
    fake_eutils.serve()
    user = django_user_model.objects.create_user("curator", password="pw")  # type: ignore[attr-defined]
    ingestion = ingestion_create(queries=[" covid ", "covid"], max_per_query=10, user=user, enqueue=False)
    assert (ingestion.queries, ingestion.status, ingestion.progress) == (["covid"], IngestionStatus.PENDING, 0.0)
    done = ingestion_run(ingestion_id=str(ingestion.pk))
    assert (done.status, done.found, done.new, done.failed, done.errors) == (IngestionStatus.SUCCEEDED, 3, 3, 0, [])
    assert done.pmids == COVID
    assert done.progress == 1.0
    assert (done.to_fetch, done.fetched) == (3, 3)
    assert set(done.timings) == {"esearch", "efetch_store", "total"}
    assert done.created_by == user
    assert done.finished_at >= done.started_at


def test_ingestion_fails_and_raises_unavailable_when_ncbi_is_down(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "down", status=503, content_type="text/plain")
    ingestion = ingestion_create(queries=["covid"], enqueue=False)
    with pytest.raises(EutilsError):
        ingestion_run(ingestion_id=str(ingestion.pk))
    ingestion.refresh_from_db()
    assert ingestion.status == IngestionStatus.FAILED
    assert ingestion.errors[0].startswith("esearch 'covid': NCBI E-utilities esearch.fcgi failed after 4 attempts")


@pytest.mark.celery
def test_real_worker_runs_the_task_after_commit(
    fake_eutils: FakeEutils, celery_worker: object, transactional_db: None
) -> None:
    fake_eutils.esearch_ids = {"covid": COVID}
    fake_eutils.serve()
    ingestion = ingestion_create(queries=["covid"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ingestion.refresh_from_db()
        if ingestion.status in {IngestionStatus.SUCCEEDED, IngestionStatus.FAILED}:
            break
        time.sleep(0.2)
    assert ingestion.status == IngestionStatus.SUCCEEDED
    assert ingestion.task_id
    assert sorted(Abstract.objects.values_list("pmid", flat=True)) == sorted(COVID)
    assert Ingestion.objects.count() == 1


def test_500_pmids_take_one_esearch_page_and_only_missing_abstracts_are_fetched_in_batches(
    corpus_eutils: CorpusEutils, corpus: Corpus
) -> None:
    from pubmed.services.store import abstracts_upsert

    query = '"patients"[Title/Abstract]'
    matching = corpus.search(query)
    assert len(matching) > 500
    first_500 = matching[:500]
    abstracts_upsert(records=[corpus.records[pmid] for pmid in first_500[:100]], embed=False)
    outcome = fetch_and_cache(queries=[query], max_per_query=500, embed=False)
    assert (outcome.found, outcome.new, outcome.failed, outcome.errors) == (500, 400, [], [])
    assert outcome.pmids == first_500
    (search,) = corpus_eutils.requests("esearch.fcgi")
    assert (search["retmax"], search["retstart"]) == ("500", "0")
    batches = [request["id"].split(",") for request in corpus_eutils.requests("efetch.fcgi")]
    assert [len(batch) for batch in batches] == [EFETCH_BATCH_SIZE, 400 - EFETCH_BATCH_SIZE]
    assert sorted(pmid for batch in batches for pmid in batch) == sorted(first_500[100:])
    assert Abstract.objects.filter(pmid__in=first_500).count() == 500

    again = fetch_and_cache(queries=[query], max_per_query=500, embed=False)
    assert (again.found, again.new) == (500, 0)
    assert len(corpus_eutils.requests("efetch.fcgi")) == 2  # nothing fetched twice
    assert len(corpus_eutils.requests("esearch.fcgi")) == 1  # answered by the esearch cache
