"""Curators edit the library in admin; other staff may only view; imports never half-save."""

import io
import json

import pytest
from django.urls import reverse

from evidence.models import Study
from tests.evidence.factories import StudyFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CSV_HEADER = "study_name,pmid,doi,nct_number,title,key_finding,disease_tags,evidence_strength,kind\n"


@pytest.fixture
def curator():
    return UserFactory(username="curator", is_staff=True, groups=["curator"])


@pytest.fixture
def viewer():
    return UserFactory(username="viewer", is_staff=True)


def test_curator_can_open_add_and_change_forms(client, curator):
    study = StudyFactory()
    client.force_login(curator)
    assert client.get(reverse("admin:evidence_study_add")).status_code == 200
    response = client.post(
        reverse("admin:evidence_study_change", args=[study.pk]),
        {
            "study_name": study.study_name,
            "kind": "trial",
            "evidence_strength": "3",
            "result_context": "both",
            "pmid": study.pmid,
            "title": "New title",
            "key_finding": "Reworded finding.",
            "disease_tags": "af,ckd",
            "identifier_checks-TOTAL_FORMS": "0",
            "identifier_checks-INITIAL_FORMS": "0",
            "findings-TOTAL_FORMS": "1",
            "findings-INITIAL_FORMS": "0",
            "findings-0-statement": "Apixaban lowered stroke versus aspirin (HR 0.63).",
            "findings-0-source_url": "pubmed.ncbi.nlm.nih.gov/37952132/",
            "findings-0-locator": "Abstract, Results",
            "findings-0-position": "1",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    study.refresh_from_db()
    assert (study.title, study.disease_tags, study.evidence_strength) == ("New title", ["af", "ckd"], 3)
    assert study.history.first().history_user == curator
    finding = study.findings.get()
    assert finding.source_url == "https://pubmed.ncbi.nlm.nih.gov/37952132/"
    assert finding.review_words() == "curated finding, awaiting review"
    assert finding.history.first().history_user == curator


def test_viewer_sees_the_library_but_cannot_change_it(client, viewer):
    study = StudyFactory(title="Original")
    client.force_login(viewer)
    assert client.get(reverse("admin:evidence_study_changelist")).status_code == 200
    page = client.get(reverse("admin:evidence_study_change", args=[study.pk]))
    assert page.status_code == 200
    assert 'name="title"' not in page.content.decode()  # read-only view
    assert client.get(reverse("admin:evidence_study_add")).status_code == 403
    response = client.post(
        reverse("admin:evidence_study_change", args=[study.pk]), {"study_name": study.study_name, "title": "Hacked"}
    )
    assert response.status_code == 403
    assert client.post(reverse("admin:evidence_study_delete", args=[study.pk]), {"post": "yes"}).status_code == 403
    assert client.get(reverse("admin:evidence_study_import")).status_code == 403
    study.refresh_from_db()
    assert study.title == "Original"


@pytest.mark.parametrize("ids", [("{pk}", "²"), ("²", "1"), ("{pk}", "٣")])
def test_a_history_version_that_is_not_a_number_is_404(client, curator, ids):
    study = StudyFactory()
    client.force_login(curator)
    object_id, version_id = (part.format(pk=study.pk) for part in ids)
    response = client.get(f"/admin/evidence/study/{object_id}/history/{version_id}/")
    assert response.status_code == 404


def test_non_staff_user_is_sent_to_admin_login(client):
    client.force_login(UserFactory(username="clinician"))
    response = client.get(reverse("admin:evidence_study_changelist"))
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_admin_form_shows_identifier_errors_inline(client, curator):
    client.force_login(curator)
    response = client.post(
        reverse("admin:evidence_study_add"),
        {
            "study_name": "Bad",
            "kind": "trial",
            "evidence_strength": "2",
            "result_context": "both",
            "pmid": "12a45",
            "doi": "doi-less",
            "nct_number": "NCT123",
            "title": "t",
            "key_finding": "k",
            "identifier_checks-TOTAL_FORMS": "0",
            "identifier_checks-INITIAL_FORMS": "0",
            "findings-TOTAL_FORMS": "0",
            "findings-INITIAL_FORMS": "0",
        },
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "&#x27;12a45&#x27; is not a PMID" in body
    assert "&#x27;doi-less&#x27; is not a DOI" in body
    assert "&#x27;NCT123&#x27; is not an NCT number" in body
    assert not Study.objects.exists()


def test_admin_form_refuses_digits_other_than_0_to_9(client, curator):
    client.force_login(curator)
    form = {
        "study_name": "Digits", "kind": "trial", "evidence_strength": "2", "result_context": "both",
        "pmid": "34449189", "title": "t", "key_finding": "k",
        "identifier_checks-TOTAL_FORMS": "0", "identifier_checks-INITIAL_FORMS": "0",
        "findings-TOTAL_FORMS": "0", "findings-INITIAL_FORMS": "0",
    }
    response = client.post(
        reverse("admin:evidence_study_add"),
        {**form, "publication_year": "\u0661\u0662\u0663", "sample_size": "\uff11\uff12\uff13"},
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "Enter a whole number in the digits 0-9, e.g. 2019; got &#x27;\u0661\u0662\u0663&#x27;." in body
    assert "Enter a whole number in the digits 0-9, e.g. 2019; got &#x27;\uff11\uff12\uff13&#x27;." in body
    assert not Study.objects.exists()
    saved = client.post(reverse("admin:evidence_study_add"), {**form, "publication_year": "2021", "sample_size": "90"})
    assert saved.status_code == 302
    assert Study.objects.values_list("publication_year", "sample_size").get() == (2021, 90)


def test_admin_search_finds_by_alias_and_pasted_pmid(client, curator):
    StudyFactory(study_name="DYNAMIC", aliases=["Tie et al. NEJM 2022"], pmid="35657320")
    StudyFactory(study_name="OTHER")
    client.force_login(curator)
    for term in ["Tie et al", "PMID: 35657320"]:
        response = client.get(reverse("admin:evidence_study_changelist"), {"q": term})
        assert response.context["cl"].result_count == 1
        assert response.context["cl"].result_list[0].study_name == "DYNAMIC"


def _import(client, content: str, *, confirm: bool = True):
    upload = io.BytesIO(content.encode())
    upload.name = "studies.csv"
    response = client.post(
        reverse("admin:evidence_study_import"),
        {"import_file": upload, "format": "0", "resource": "0"},  # format 0 = CSV
    )
    return response


def test_import_of_a_file_with_one_bad_row_saves_nothing_and_names_the_row(client, curator):
    StudyFactory(study_name="EXISTING", pmid="11111111", title="Kept as is")
    client.force_login(curator)
    content = CSV_HEADER + (
        "GOOD-1,22222222,,,Good title,Good finding,af|ckd,high,trial\n"
        "BAD-ROW,not-a-pmid,,,Bad title,Bad finding,af,high,trial\n"
        "EXISTING,11111111,,,Overwritten title,Finding,af,low,trial\n"
    )
    response = _import(client, content)
    body = response.content.decode()
    assert response.status_code == 200
    assert "not-a-pmid" in body and "is not a PMID" in body
    assert "Confirm import" not in body
    assert set(Study.objects.values_list("study_name", flat=True)) == {"EXISTING"}
    assert Study.objects.get().title == "Kept as is"


def test_import_of_a_valid_file_creates_and_updates(client, curator):
    StudyFactory(study_name="EXISTING", pmid="11111111", title="Old")
    client.force_login(curator)
    content = CSV_HEADER + (
        "NEW,22222222,10.1056/NEJMoa2200075,NCT03057951,New title,New finding,af|ckd,high,trial\n"
        "EXISTING,11111111,,,Updated,Finding,af,low,cohort\n"
    )
    preview = _import(client, content)
    assert preview.status_code == 200
    form = preview.context["confirm_form"]
    confirm = client.post(reverse("admin:evidence_study_process_import"), form.initial)
    assert confirm.status_code == 302
    new = Study.objects.get(study_name="NEW")
    assert (new.doi, new.nct_number, new.disease_tags, new.evidence_strength) == (
        "10.1056/NEJMoa2200075",
        "NCT03057951",
        ["af", "ckd"],
        3,
    )
    assert Study.objects.get(study_name="EXISTING").title == "Updated"


def test_export_json_round_trips_identifiers_and_strength_names(client, viewer):
    StudyFactory(study_name="DYNAMIC", pmid="35657320", evidence_strength=3, disease_tags=["colon", "ctdna"])
    client.force_login(viewer)
    response = client.post(
        reverse("admin:evidence_study_export"),
        {
            "format": "2",
            "resource": "0",
            "export_items": [],
            **{f"studyresource_{f}": "on" for f in ("study_name", "pmid", "evidence_strength", "disease_tags")},
        },
    )
    assert response.status_code == 200, response.content[:500]
    rows = json.loads(response.content)
    assert rows == [
        {"study_name": "DYNAMIC", "pmid": "35657320", "evidence_strength": "high", "disease_tags": "colon|ctdna"}
    ]
