"""Curated findings: seeded for every library study, traced to a source, reviewed by a named curator."""

import json
import re

import pytest
from django.urls import reverse

from chat.answer_settings import AnswerSettings
from chat.providers.composer import compose_answer
from evidence.findings import citable_text, curated_findings, shown_statement
from evidence.models import Finding, ReviewStatus, Study
from evidence.services.seed import SEED_PATH, SeedError, evidence_seed
from evidence.sources import EvidenceSet, EvidenceSource
from evidence.text import content_terms
from tests.evidence.factories import StudyFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SEED = json.loads(SEED_PATH.read_text(encoding="utf-8"))


@pytest.fixture
def curator():
    return UserFactory(username="curator", first_name="Ada", last_name="Curator", is_staff=True, groups=["curator"])


def _finding(study, **values):
    fields = {
        "statement": "Apixaban lowered stroke or systemic embolism versus aspirin (HR 0.63).",
        "source_url": "https://pubmed.ncbi.nlm.nih.gov/37952132/",
        "locator": "Abstract, Results",
        **values,
    }
    return Finding.objects.create(study=study, **fields)


def test_every_seeded_study_has_findings_with_a_source_and_a_locator_awaiting_review():
    evidence_seed()

    assert Finding.objects.count() >= 50
    for study in Study.objects.prefetch_related("findings"):
        findings = list(study.findings.all())
        assert findings, study.study_name
        for finding in findings:
            assert re.match(r"^https://", finding.source_url), finding
            assert finding.locator.strip(), finding
            assert finding.review_status == ReviewStatus.AWAITING_REVIEW
            assert finding.reviewed_by is None and finding.reviewed_at is None


def test_graded_findings_show_the_guidelines_own_grade_and_trial_findings_an_effect_size():
    evidence_seed()

    doac = Finding.objects.get(study__study_name__startswith="2023 ACC/AHA", decision_tags__contains=["drug_choice"])
    assert shown_statement(doac).endswith("rather than warfarin, to lower mortality, stroke, systemic embolism and "
                                          "intracranial haemorrhage (Class 1, LOE A).")
    for finding in Finding.objects.filter(study__kind="trial").exclude(study__study_name__contains="protocol"):
        assert re.search(r"\d", finding.statement), finding


def test_a_seeded_finding_is_never_a_copy_of_the_study_description():
    evidence_seed()

    for finding in Finding.objects.select_related("study"):
        assert finding.statement.strip() != finding.study.key_finding.strip()


def test_reseeding_changes_nothing_and_keeps_a_curators_review_and_edit():
    evidence_seed()
    curator = UserFactory(username="reviewer", is_staff=True, groups=["curator"])
    reviewed = Finding.objects.order_by("pk").first()
    reviewed.mark_reviewed(curator)
    reviewed.save()
    edited = Finding.objects.order_by("pk")[1]
    edited.statement = "A curator's own wording of the same result."
    edited.save()
    count = Finding.objects.count()

    result = evidence_seed()

    assert result.findings.created == 0 and result.findings.updated == 0
    assert Finding.objects.count() == count
    reviewed.refresh_from_db()
    edited.refresh_from_db()
    assert reviewed.review_status == ReviewStatus.REVIEWED and reviewed.reviewed_by == curator
    assert edited.statement == "A curator's own wording of the same result."


def test_a_malformed_finding_names_its_study_and_writes_nothing(tmp_path):
    content = json.loads(json.dumps(SEED))
    content["studies"][0]["findings"] = [
        {"key": "x", "statement": "A result.", "source_url": "not a url", "locator": "Abstract"},
        {"key": "y", "statement": "Another.", "source_url": "https://example.org/", "locator": "Abstract",
         "decision_tags": ["not_a_decision"]},
    ]
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(content), encoding="utf-8")

    with pytest.raises(SeedError) as excinfo:
        evidence_seed(path=path)

    message = str(excinfo.value)
    assert content["studies"][0]["study_name"] in message
    assert "finding 1 ('x')" in message and "URL" in message
    assert "not_a_decision is not a decision tag" in message
    assert not Study.objects.exists() and not Finding.objects.exists()


def test_changing_what_a_reviewed_finding_says_sends_it_back_for_review(curator):
    finding = _finding(StudyFactory())
    finding.mark_reviewed(curator)
    finding.save()
    assert finding.review_words().startswith("curated finding, reviewed by Ada Curator on ")

    finding.position = 3  # order is not what a reviewer vouches for
    finding.save()
    finding.refresh_from_db()
    assert finding.is_reviewed

    finding.evidence_level = "LOE C"
    finding.save()
    finding.refresh_from_db()
    assert finding.review_status == ReviewStatus.AWAITING_REVIEW
    assert finding.reviewed_by is None and finding.reviewed_at is None
    assert finding.review_words() == "curated finding, awaiting review"
    assert finding.history.count() == 4


def test_shown_statement_adds_the_grade_once_and_the_citable_text_holds_it():
    study = StudyFactory(key_finding="A guideline about atrial fibrillation.")
    _finding(study, statement="Prefer a DOAC over warfarin.", recommendation_class="Class 1", evidence_level="LOE A")

    shown = shown_statement(study.findings.get())
    assert shown == "Prefer a DOAC over warfarin (Class 1, LOE A)."
    assert citable_text(study) == f"{shown}\nA guideline about atrial fibrillation."
    assert [finding.shown for finding in curated_findings(study)] == [shown]


def test_a_statement_that_places_its_grades_itself_is_shown_as_written():
    # Two recommendations in one finding: "(Class 2a)" appended at the end read as the grade of the second one.
    study = StudyFactory()
    written = "In HFpEF, an SGLT2 inhibitor is reasonable (Class 2a); MRAs get only weaker recommendations (Class 2b)."
    _finding(study, statement=written, recommendation_class="Class 2a")
    assert shown_statement(study.findings.get()) == written
    # A parenthesis that is no grade does not stop the grade being added.
    other = StudyFactory()
    _finding(other, statement="Apixaban (2.5 mg) may be considered", recommendation_class="", evidence_level="LOE C")
    assert shown_statement(other.findings.get()) == "Apixaban (2.5 mg) may be considered (LOE C)."


def test_curator_marks_a_finding_reviewed_in_admin_and_the_history_shows_it(client, curator):
    finding = _finding(StudyFactory())
    client.force_login(curator)
    url = reverse("admin:evidence_finding_change", args=[finding.pk])
    form = client.get(url)
    assert form.status_code == 200 and "I checked this finding against its source" in form.text

    response = client.post(url, {
        "study": finding.study_id, "statement": finding.statement, "decision_tags": "",
        "recommendation_class": "", "evidence_level": "", "source_url": finding.source_url,
        "locator": finding.locator, "position": 0, "mark_reviewed": "on",
    })

    assert response.status_code == 302
    finding.refresh_from_db()
    assert finding.is_reviewed and finding.reviewed_by == curator and finding.reviewed_at is not None
    history = client.get(reverse("admin:evidence_finding_history", args=[finding.pk]))
    assert history.status_code == 200 and "curator" in history.text


def test_the_review_action_is_for_curators_only(client, curator):
    finding = _finding(StudyFactory())
    viewer = UserFactory(username="viewer", is_staff=True)
    changelist = reverse("admin:evidence_finding_changelist")
    client.force_login(viewer)
    assert "mark_reviewed" not in client.get(changelist).text
    refused = client.post(changelist, {"action": "mark_reviewed", "_selected_action": [finding.pk]})
    finding.refresh_from_db()
    assert refused.status_code in (200, 302, 403) and not finding.is_reviewed

    client.force_login(curator)
    client.post(changelist, {"action": "mark_reviewed", "_selected_action": [finding.pk]})
    finding.refresh_from_db()
    assert finding.is_reviewed and finding.reviewed_by == curator


def test_the_study_page_in_admin_lists_its_findings_with_their_review(client, curator):
    finding = _finding(StudyFactory())
    client.force_login(curator)
    page = client.get(reverse("admin:evidence_study_change", args=[finding.study_id]))
    assert "Curated findings" in page.text and "awaiting review" in page.text


def test_the_answer_leads_with_the_finding_that_states_the_drug_and_shows_its_review():
    study = StudyFactory(
        study_name="AF guideline",
        kind="guideline",
        key_finding="A guideline that describes atrial fibrillation care as a framework of stages.",
        disease_tags=["af"],
    )
    _finding(
        study,
        statement="In atrial fibrillation with chronic kidney disease, apixaban is preferred over warfarin.",
        recommendation_class="Class 2a",
        evidence_level="LOE B-R",
        position=2,
    )
    _finding(study, statement="Atrial fibrillation care is organised in stages.", position=1)
    source = EvidenceSource.from_study(Study.objects.prefetch_related("findings").get(pk=study.pk))
    question = "AF with CKD: apixaban or warfarin?"

    answer = compose_answer(
        question=question,
        evidence=EvidenceSet([source]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
    )

    first = answer.split("\n\n")[0]
    assert "apixaban is preferred over warfarin (Class 2a, LOE B-R)" in first
    assert "curated finding, awaiting review" in first
    assert "framework of stages" not in answer


def test_the_composers_label_comes_off_a_quoted_library_sentence_whatever_the_study_is_called():
    source = EvidenceSource(
        doc_id="pmid:36646802", chunk_id="key_finding", origin="library", study_name="CIRCULATE-Japan GALAXY (interim)",
        journal="Nat Med", year=2023, pmid="36646802", text="ctDNA positivity predicted recurrence.",
    )
    sentence = "ctDNA positivity predicted recurrence."
    labelled = f"{source.label(sentence)}{sentence}"
    assert labelled.startswith("CIRCULATE-Japan GALAXY (interim) (Nat Med, 2023): ")
    assert source.without_label(labelled) == sentence
    assert source.without_label(sentence) == sentence
    retrieved = EvidenceSource(doc_id="pmid:1", chunk_id="c0", origin="retrieved", title="CIRCULATE", pmid="1")
    assert retrieved.without_label("CIRCULATE (x): y") == "CIRCULATE (x): y"
