"""The public library pages."""

import pytest
from django.urls import reverse

from tests.evidence.factories import GuidanceItemFactory, StudyFactory

pytestmark = pytest.mark.django_db


def test_library_lists_studies_with_direct_links_without_login(client, django_assert_max_num_queries):
    StudyFactory(study_name="DYNAMIC", pmid="35657320", doi="10.1056/NEJMoa2200075", evidence_strength=3)
    StudyFactory(study_name="ARTESiA", pmid="37952132", nct_number="NCT01938248", evidence_strength=3)
    with django_assert_max_num_queries(4):
        response = client.get(reverse("evidence:library"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "2 studies found." in body
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/35657320/"' in body
    assert 'href="https://doi.org/10.1056/NEJMoa2200075"' in body
    assert 'href="https://clinicaltrials.gov/study/NCT01938248"' in body


def test_library_search_and_filters_narrow_results(client):
    StudyFactory(study_name="DYNAMIC", aliases=["Tie et al. NEJM 2022"], disease_tags=["colon", "ctdna"])
    StudyFactory(study_name="ARTESiA", disease_tags=["af", "ahre"])
    body = client.get(reverse("evidence:library"), {"q": "Tie et al"}).content.decode()
    assert "DYNAMIC" in body and "ARTESiA</a>" not in body
    body = client.get(reverse("evidence:library"), {"tag": "ahre"}).content.decode()
    assert "ARTESiA</a>" in body and "DYNAMIC</a>" not in body


def test_library_explains_a_bad_filter_instead_of_failing(client):
    StudyFactory(study_name="DYNAMIC")
    response = client.get(reverse("evidence:library"), {"strength": "enormous"})
    assert response.status_code == 400
    assert "Unknown strength &#x27;enormous&#x27;; use one of low, moderate, high." in response.content.decode()


def test_study_detail_shows_finding_links_and_guidance(client):
    guidance = GuidanceItemFactory(title="ctDNA-guided de-escalation", statement="Consider omitting chemotherapy.")
    study = StudyFactory(
        study_name="DYNAMIC",
        pmid="35657320",
        pmcid="PMC9701133",
        key_finding="Chemo use fell.",
        guidance_item=guidance,
    )
    StudyFactory(study_name="DYNAMIC 5-year", guidance_item=guidance)
    body = client.get(reverse("evidence:study-detail", args=[study.pk])).content.decode()
    assert "Chemo use fell." in body
    assert 'href="https://pmc.ncbi.nlm.nih.gov/articles/PMC9701133/"' in body
    assert "ctDNA-guided de-escalation" in body and "DYNAMIC 5-year" in body
    assert client.get(reverse("evidence:study-detail", args=[999999])).status_code == 404


def test_library_pages_show_each_study_level_of_evidence(client):
    StudyFactory(study_name="DYNAMIC", kind="trial", study_design="Randomised phase 2 trial.")
    StudyFactory(study_name="GALAXY", kind="cohort", study_design="Prospective registry.")
    guideline = StudyFactory(study_name="ESC AF 2024", kind="guideline")
    import lxml.html

    tree = lxml.html.fromstring(client.get(reverse("evidence:library")).content)
    assert sorted(badge.text_content() for badge in tree.cssselect(".badge.level")) == [
        "Cohort / case-control", "Guideline", "RCT"
    ]
    detail = lxml.html.fromstring(client.get(reverse("evidence:study-detail", args=[guideline.pk])).content)
    assert detail.cssselect(".badge.level")[0].get("data-level") == "guideline"


def test_study_detail_lists_each_curated_finding_with_its_source_and_who_reviewed_it(client):
    from evidence.models import Finding
    from tests.factories import UserFactory

    study = StudyFactory(study_name="ARTESiA", key_finding="A summary of the trial.")
    Finding.objects.create(
        study=study, statement="Apixaban lowered stroke versus aspirin (HR 0.63).", source_url="https://pubmed.ncbi.nlm.nih.gov/37952132/",
        locator="Abstract, Results", position=1,
    )
    reviewed = Finding.objects.create(
        study=study, statement="Major bleeding was more frequent with apixaban.", recommendation_class="",
        source_url="https://example.org/report", locator="Results paragraph", position=2,
    )
    reviewed.mark_reviewed(UserFactory(username="rev", first_name="Rita", last_name="Reviewer"))
    reviewed.save()

    body = client.get(reverse("evidence:study-detail", args=[study.pk])).content.decode()

    assert body.index("Apixaban lowered stroke versus aspirin (HR 0.63).") < body.index("Major bleeding was more")
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/37952132/"' in body and ">Abstract, Results</a>" in body
    assert "curated finding, awaiting review" in body
    assert "curated finding, reviewed by Rita Reviewer on " in body
    assert "A summary of the trial." in body
