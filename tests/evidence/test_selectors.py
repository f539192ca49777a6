import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evidence.models import Finding, ResultContext
from evidence.selectors import library_studies, studies_for_tags, study_search, verified_references_block
from tests.evidence.factories import StudyFactory

pytestmark = pytest.mark.django_db


def test_lookup_orders_by_strength_then_newest_year_and_caps_at_eight():
    StudyFactory(study_name="moderate-2024", evidence_strength=2, publication_year=2024)
    StudyFactory(study_name="high-2019", evidence_strength=3, publication_year=2019)
    StudyFactory(study_name="high-2023", evidence_strength=3, publication_year=2023)
    StudyFactory(study_name="low-2025", evidence_strength=1, publication_year=2025)
    for n in range(6):
        StudyFactory(study_name=f"low-old-{n}", evidence_strength=1, publication_year=2000 + n)
    names = [s.study_name for s in studies_for_tags(tags=["AF"])]
    assert names == [
        "high-2023",
        "high-2019",
        "moderate-2024",
        "low-2025",
        "low-old-5",
        "low-old-4",
        "low-old-3",
        "low-old-2",
    ]


def test_lookup_needs_tag_overlap_and_matching_or_both_context():
    StudyFactory(study_name="ckd-only", disease_tags=["ckd"])
    StudyFactory(study_name="positive", disease_tags=["ctdna"], result_context=ResultContext.POSITIVE)
    StudyFactory(study_name="negative", disease_tags=["ctdna"], result_context=ResultContext.NEGATIVE)
    StudyFactory(study_name="both", disease_tags=["ctdna", "mrd"], result_context=ResultContext.BOTH)
    found = {s.study_name for s in studies_for_tags(tags=["ctdna"], context="negative")}
    assert found == {"negative", "both"}
    assert studies_for_tags(tags=[]) == []
    assert {s.study_name for s in studies_for_tags(tags=["mrd", "ckd"])} == {"ckd-only", "both"}


def test_verified_references_block_has_one_line_per_study_with_identifiers():
    study = StudyFactory(
        study_name="DYNAMIC",
        pmid="35657320",
        doi="10.1056/NEJMoa2200075",
        publication_year=2022,
        key_finding="ctDNA-guided treatment halved chemotherapy use.",
    )
    block = verified_references_block(studies=[study])
    assert block.splitlines() == [
        "VERIFIED REFERENCES (curated library; cite these identifiers exactly):",
        "- DYNAMIC (PMID 35657320, DOI 10.1056/NEJMoa2200075; 2022): ctDNA-guided treatment halved chemotherapy use.",
    ]
    assert "none in the curated library" in verified_references_block(studies=[])


@pytest.mark.parametrize(
    "query", ["dynamic", "Tie et al. NEJM 2022", "35657320", "PMID: 35657320", "10.1056/nejmoa2200075", "adjuvant"]
)
def test_search_matches_name_alias_identifiers_and_words(query):
    StudyFactory(
        study_name="DYNAMIC",
        aliases=["Tie et al. NEJM 2022"],
        pmid="35657320",
        doi="10.1056/NEJMoa2200075",
        title="Circulating Tumor DNA Analysis Guiding Adjuvant Therapy in Stage II Colon Cancer",
    )
    StudyFactory(study_name="OTHER", title="Something unrelated about kidneys")
    assert [s.study_name for s in study_search(text=query)] == ["DYNAMIC"]


def _library() -> dict[str, list[str]]:
    return {study.study_name: [finding.statement for finding in study.findings.all()] for study in library_studies()}


def test_the_library_is_loaded_again_only_when_a_study_or_finding_changes():
    kept = StudyFactory(study_name="KEPT")
    finding = Finding.objects.create(study=kept, statement="Mortality fell.", source_url="https://example.org/a")
    assert _library() == {"KEPT": ["Mortality fell."]}
    with CaptureQueriesContext(connection) as queries:
        assert _library() == {"KEPT": ["Mortality fell."]}
    assert len(queries) == 1  # the stamp only: the studies and their findings were not loaded again

    finding.statement = "Mortality fell by a third."
    finding.save()
    assert _library() == {"KEPT": ["Mortality fell by a third."]}
    added = StudyFactory(study_name="ADDED")
    assert set(_library()) == {"KEPT", "ADDED"}
    kept.study_name = "RENAMED"
    kept.save()
    assert set(_library()) == {"RENAMED", "ADDED"}
    added.delete()
    assert _library() == {"RENAMED": ["Mortality fell by a third."]}
    finding.delete()
    assert _library() == {"RENAMED": []}
