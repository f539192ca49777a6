"""Retractions, corrections and levels of evidence: parsed from efetch XML, MEDLINE and esummary, stored,
backfilled and refreshed."""

from __future__ import annotations

import dataclasses
import json
from io import StringIO
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from lxml import etree

from pubmed.clients import eutils_client
from pubmed.models import Abstract
from pubmed.parsers import CommentCorrection, parse_jsonl, parse_medline, parse_pubmed_xml
from pubmed.services.store import abstracts_upsert
from tests.pubmed.conftest import FakeEutils

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "efetch_retractions.xml"


@pytest.fixture(scope="module")
def retraction_records():
    return {record.pmid: record for record in parse_pubmed_xml(FIXTURE.read_bytes())}


def test_efetch_comments_corrections_are_parsed_and_other_links_skipped(retraction_records):
    retracted = retraction_records["99000001"]
    assert retracted.publication_types == ["Journal Article", "Randomized Controlled Trial", "Retracted Publication"]
    # The CommentIn link is not kept; the retraction notice is, with its citation and note.
    assert retracted.corrections == [
        CommentCorrection(type="RetractionIn", pmid="99000003", source="J Invent Cardiol. 2023 Jan;14(1):5.",
                          note="Data could not be verified.")
    ]
    assert [c.type for c in retraction_records["99000003"].corrections] == ["RetractionOf"]
    assert [(c.type, c.pmid) for c in retraction_records["99000004"].corrections] == [
        ("ErratumIn", "99000006"), ("ExpressionOfConcernIn", "99000007")
    ]


def test_medline_link_fields_are_parsed():
    text = (
        "PMID- 99000001\nTI  - Colchicine after myocardial infarction.\nPT  - Journal Article\n"
        "PT  - Retracted Publication\nRIN - J Invent Cardiol. 2023 Jan;14(1):5. PMID: 99000003\n"
        "ECI - J Invent Cardiol. 2024 Feb;15(2):9. PMID: 99000007\n"
    )
    (record,) = parse_medline(text)
    assert [(c.type, c.pmid, c.source) for c in record.corrections] == [
        ("RetractionIn", "99000003", "J Invent Cardiol. 2023 Jan;14(1):5."),
        ("ExpressionOfConcernIn", "99000007", "J Invent Cardiol. 2024 Feb;15(2):9."),
    ]


def test_esummary_pubtype_and_references_mark_a_retraction(fake_eutils: FakeEutils, eutils_dir: Path) -> None:
    body = json.loads((eutils_dir / "yeliztli/esummary_pubmed_json_36723951.json").read_text())
    item = body["result"]["36723951"]
    item["pubtype"] = [*item["pubtype"], "Retracted Publication"]
    item["references"] = [
        {"refsource": "JAMA Cardiol. 2024;9(1):1.", "reftype": "Retraction in", "pmid": 99000003, "note": ""},
        {"refsource": "JAMA Cardiol. 2023;8(6):600.", "reftype": "Comment in", "pmid": 99000010, "note": ""},
    ]
    fake_eutils.respond("/esummary.fcgi", json.dumps(body))
    summary = eutils_client().esummary(["36723951"])["36723951"]
    assert summary.is_retracted is True
    assert summary.corrections == [
        {"type": "RetractionIn", "pmid": "99000003", "source": "JAMA Cardiol. 2024;9(1):1.", "note": ""}
    ]
    assert summary.integrity.retraction_notices == ("99000003",)


@pytest.mark.django_db
def test_upsert_stores_retraction_concern_and_level(retraction_records):
    abstracts_upsert(records=list(retraction_records.values()), embed=False)
    stored = {a.pmid: a for a in Abstract.objects.all()}
    assert (stored["99000001"].is_retracted, stored["99000001"].evidence_level) == (True, "rct")
    assert stored["99000001"].retraction_notices == [
        {"type": "RetractionIn", "pmid": "99000003", "source": "J Invent Cardiol. 2023 Jan;14(1):5.",
         "note": "Data could not be verified."}
    ]
    assert (stored["99000004"].is_retracted, stored["99000004"].has_expression_of_concern) == (False, True)
    assert (stored["99000004"].evidence_level, stored["99000004"].evidence_level_inferred) == ("cohort", False)
    assert stored["99000005"].level.badge == "Systematic review / MA"
    assert stored["99000003"].is_retracted is False  # the notice, not the retracted article


@pytest.mark.django_db
def test_pubmedqa_style_records_without_types_get_an_inferred_level():
    (record,) = parse_jsonl(json.dumps({
        "pmid": "99000020", "title": "Does X help Y?",
        "abstract": "METHODS: Patients were randomly assigned to X or usual care. RESULTS: X helped.",
    }))
    abstracts_upsert(records=[record], embed=False)
    stored = Abstract.objects.get(pmid="99000020")
    assert (stored.evidence_level, stored.evidence_level_inferred, stored.level.badge) == (
        "rct", True, "RCT (inferred)"
    )


@pytest.mark.django_db
def test_backfill_migration_sets_levels_and_type_retractions():
    import importlib

    migration = importlib.import_module("pubmed.migrations.0009_backfill_abstract_levels_and_retractions")
    Abstract.objects.create(pmid="99000030", title="A review of X", publication_types=["Journal Article", "Review"],
                            content_hash="x")
    Abstract.objects.create(pmid="99000031", title="X trial", publication_types=["Retracted Publication"],
                            content_hash="y")
    migration.backfill(apps, None)
    levels = dict(Abstract.objects.values_list("pmid", "evidence_level"))
    assert levels == {"99000030": "narrative_review", "99000031": "other"}
    assert list(Abstract.objects.filter(is_retracted=True).values_list("pmid", flat=True)) == ["99000031"]


@pytest.mark.django_db
def test_refresh_command_fetches_stored_records_again_and_reports_new_retractions(
    fake_eutils: FakeEutils, retraction_records
) -> None:
    before = dataclasses.replace(
        retraction_records["99000001"], publication_types=["Journal Article", "Randomized Controlled Trial"],
        corrections=[],
    )
    abstracts_upsert(records=[before], embed=False)
    assert Abstract.objects.get(pmid="99000001").is_retracted is False
    root = etree.fromstring(FIXTURE.read_bytes(), parser=etree.XMLParser(resolve_entities=False, no_network=True))
    for article in root.findall("PubmedArticle"):
        fake_eutils.articles[article.findtext("MedlineCitation/PMID")] = etree.tostring(article)
    fake_eutils.serve()
    from evidence.models import IdentifierCheck
    from tests.evidence.factories import StudyFactory

    study = StudyFactory(study_name="COLCHI-MI", pmid="99000001", title=before.title)
    out = StringIO()
    call_command("refresh_abstracts", "99000001", "--no-progress", stdout=out, stderr=StringIO())
    assert out.getvalue().strip() == "Refreshed 1 of 1 abstract(s); 1 retracted (newly: 99000001)."
    assert Abstract.objects.get(pmid="99000001").is_retracted is True
    assert [s.params["id"] for s in fake_eutils.requests("/efetch.fcgi")] == ["99000001"]
    # The library study with that PMID is flagged without a separate verify run.
    check = IdentifierCheck.objects.get(study=study)
    assert (check.status, check.retracted) == ("match", True)
    assert check.detail == (
        "From refresh_abstracts (PubMed efetch). PubMed: Retracted (retraction notice PMID 99000003)."
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Give PMIDs to refresh, or --all (not both), e.g. refresh_abstracts 35657320."),
        (("abc",), "Not PMIDs: abc; use digits only, e.g. 35657320."),
        (("99000099",), "Not stored, nothing to refresh: 99000099 (use ingest_pubmed to add them)."),
        (("99000099", "--source", "jsonl"), "--source only applies with --all."),
    ],
)
def test_refresh_command_rejects_bad_input(args, message):
    with pytest.raises(CommandError) as raised:
        call_command("refresh_abstracts", *args, stdout=StringIO(), stderr=StringIO())
    assert str(raised.value) == message


@pytest.mark.django_db
def test_search_api_flags_retractions_and_filters_and_sorts_by_level(client, retraction_records):
    abstracts_upsert(records=list(retraction_records.values()), embed=True)
    url = "/api/v1/abstracts/search"
    body = client.get(url, {"q": "colchicine after myocardial infarction", "k": 5, "sort": "level"}).json()
    rows = {hit["pmid"]: hit for hit in body["results"]}
    assert rows["99000001"]["retracted"] is True and rows["99000005"]["retracted"] is False
    assert rows["99000004"]["expression_of_concern"] is True
    assert body["results"][0]["pmid"] == "99000005"  # the meta-analysis leads when sorted by level
    assert rows["99000001"]["evidence_level_label"] == "Randomised controlled trial"
    kept = client.get(url, {"q": "colchicine after myocardial infarction", "exclude_retracted": "true"}).json()
    assert "99000001" not in {hit["pmid"] for hit in kept["results"]}
    only = client.get(url, {"q": "colchicine after myocardial infarction", "level": "systematic_review"}).json()
    assert [hit["pmid"] for hit in only["results"]] == ["99000005"]
    bad = client.get(url, {"q": "colchicine", "level": "anecdote"})
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("level.0: Unknown level 'anecdote'; use one of guideline")


@pytest.mark.django_db
def test_abstract_admin_filters_retracted_records(client, retraction_records):
    from tests.factories import UserFactory

    abstracts_upsert(records=list(retraction_records.values()), embed=False)
    client.force_login(UserFactory(username="admin-retract", is_staff=True, is_superuser=True))
    response = client.get("/admin/pubmed/abstract/", {"is_retracted__exact": "1"})
    assert [a.pmid for a in response.context["cl"].result_list] == ["99000001"]
    levels = client.get("/admin/pubmed/abstract/", {"evidence_level__exact": "systematic_review"})
    assert [a.pmid for a in levels.context["cl"].result_list] == ["99000005"]


@pytest.mark.django_db
def test_beat_task_refreshes_the_stalest_pubmed_records_and_leaves_file_records_alone(
    fake_eutils: FakeEutils, retraction_records, settings
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from pubmed.tasks import refresh_stale_abstracts_task

    stale = dataclasses.replace(retraction_records["99000001"], publication_types=["Journal Article"], corrections=[])
    abstracts_upsert(records=[stale, retraction_records["99000005"]], embed=False)
    (jsonl,) = parse_jsonl(json.dumps({"pmid": "99000020", "title": "Does X help Y?", "abstract": "Yes."}))
    abstracts_upsert(records=[jsonl], embed=False, source="jsonl")
    Abstract.objects.filter(pmid="99000001").update(fetched_at=timezone.now() - timedelta(days=90))
    Abstract.objects.filter(pmid="99000020").update(fetched_at=timezone.now() - timedelta(days=400))
    Abstract.objects.filter(pmid="99000005").update(fetched_at=timezone.now() - timedelta(days=5))
    root = etree.fromstring(FIXTURE.read_bytes(), parser=etree.XMLParser(resolve_entities=False, no_network=True))
    for article in root.findall("PubmedArticle"):
        fake_eutils.articles[article.findtext("MedlineCitation/PMID")] = etree.tostring(article)
    fake_eutils.serve()
    settings.REFRESH_ABSTRACTS_AFTER_DAYS, settings.REFRESH_ABSTRACTS_BATCH = 30, 10
    assert refresh_stale_abstracts_task() == {"refreshed": 1, "newly_retracted": ["99000001"], "errors": []}
    assert [s.params["id"] for s in fake_eutils.requests("/efetch.fcgi")] == ["99000001"]
    assert Abstract.objects.get(pmid="99000001").is_retracted is True
