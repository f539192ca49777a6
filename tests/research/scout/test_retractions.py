"""Evidence Scout never carries a retracted abstract past its semantic-search stage, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from research.models import ScoutRun
from research.scout.pipeline import StageContext, _search

FIXTURE = Path(__file__).resolve().parent.parent.parent / "fixtures" / "efetch_retractions.xml"

pytestmark = pytest.mark.django_db


def test_search_stage_leaves_retracted_abstracts_out_and_names_them():
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    abstracts_upsert(records=parse_pubmed_xml(FIXTURE.read_bytes()), embed=True)
    run = ScoutRun.objects.create(
        drug="colchicine", disease="myocardial infarction", max_pmids=20,
        state={"normalise": {"normalised": "myocardial infarction"},
               "fetch": {"pmids": ["99000001", "99000005", "99000004"]}},
    )
    output, count, detail = _search(StageContext(run, client=None, complete=None))  # type: ignore[arg-type]
    assert "99000001" not in [hit["pmid"] for hit in output["hits"]]
    assert {hit["pmid"] for hit in output["hits"]} == {"99000005", "99000004"}
    assert output["retracted"] == [
        {"pmid": "99000001",
         "title": "Colchicine after myocardial infarction: a randomised controlled trial of cardiovascular events."}
    ]
    assert detail == (
        "2 of 2 stored abstracts closest to the therapeutic question; 1 retracted abstract was excluded: "
        "PMID 99000001 (Colchicine after myocardial infarction: a randomised controlled trial of cardiovascular "
        "events.)"
    )
    assert count == 2
