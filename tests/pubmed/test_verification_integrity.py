"""Verify identifiers reports retractions and expressions of concern (esummary pubtype and references), and
the admin flags those studies in a column and a filter."""

import json

import pytest
from django.urls import reverse

from evidence.models import IdentifierCheck
from pubmed.services.verification import study_identifiers_verify
from tests.evidence.factories import StudyFactory
from tests.factories import UserFactory

RECORDING = "eutils/yeliztli/esummary_pubmed_json_34313350_27078154.json"


@pytest.fixture
def flagged_esummary(httpserver, settings, shared_data):
    """The recorded esummary answer, with one record retracted and the other under an expression of concern."""
    settings.NCBI_EUTILS_BASE_URL = httpserver.url_for("/entrez/eutils/")
    settings.NCBI_MAX_RETRIES = 0
    body = json.loads((shared_data / RECORDING).read_text())
    retracted, concern = body["result"]["34313350"], body["result"]["27078154"]
    retracted["pubtype"] = [*retracted["pubtype"], "Retracted Publication"]
    retracted["references"] = [
        {"refsource": "J Clin Med. 2024;13(1):1.", "reftype": "Retraction in", "pmid": 99000050, "note": ""}
    ]
    concern["references"] = [
        {"refsource": "J Clin Med. 2024;13(2):2.", "reftype": "Expression of concern in", "pmid": 99000051,
         "note": ""}
    ]
    httpserver.expect_request("/entrez/eutils/esummary.fcgi").respond_with_data(
        json.dumps(body), content_type="application/json"
    )
    return body


@pytest.fixture
def studies(db, flagged_esummary):
    return {
        "retracted": StudyFactory(study_name="retracted", pmid="34313350",
                                  title=flagged_esummary["result"]["34313350"]["title"]),
        "concern": StudyFactory(study_name="concern", pmid="27078154"),
        "clean": StudyFactory(study_name="clean", pmid="", doi="10.1056/NEJMoa2200075"),
    }


def test_verify_report_records_retraction_and_concern(studies):
    study_identifiers_verify(study_ids=[s.pk for s in studies.values()])
    retracted = studies["retracted"].identifier_checks.get()
    assert (retracted.status, retracted.retracted, retracted.expression_of_concern) == ("match", True, False)
    assert retracted.detail == "PubMed: Retracted (retraction notice PMID 99000050)."
    assert "Retracted Publication" in retracted.publication_types
    assert retracted.notices == [
        {"type": "RetractionIn", "pmid": "99000050", "source": "J Clin Med. 2024;13(1):1.", "note": ""}
    ]
    concern = studies["concern"].identifier_checks.get()
    assert (concern.retracted, concern.expression_of_concern) == (False, True)
    assert concern.detail.startswith("PubMed: Expression of concern (PMID 99000051). PubMed title: ")
    assert studies["clean"].identifier_checks.get().retracted is None


def test_admin_lists_and_filters_flagged_studies(client, studies):
    study_identifiers_verify(study_ids=[s.pk for s in studies.values()])
    client.force_login(UserFactory(username="cura", is_staff=True, groups=["curator"]))
    url = reverse("admin:evidence_study_changelist")
    page = client.get(url).content.decode()
    assert page.count('class="integrity-retracted"') == 1
    assert page.count('class="integrity-concern"') == 1
    assert "PubMed integrity" in page

    def names(**params):
        response = client.get(url, params)
        return sorted(study.study_name for study in response.context["cl"].result_list)

    assert names(integrity="retracted") == ["retracted"]
    assert names(integrity="concern") == ["concern"]
    assert names(integrity="flagged") == ["concern", "retracted"]
    # A later clean check clears the flag: the column and filter read the latest check only.
    IdentifierCheck.objects.create(study=studies["retracted"], status="match", pmid="34313350", retracted=False,
                                   expression_of_concern=False)
    assert names(integrity="retracted") == []
    assert names(integrity="clear") == ["retracted"]
