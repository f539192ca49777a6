import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from evidence.models import Study
from tests.evidence.factories import StudyFactory

pytestmark = pytest.mark.django_db


def test_study_without_any_identifier_is_rejected_by_validation_and_database():
    study = StudyFactory.build(pmid="", doi="", nct_number="")
    with pytest.raises(ValidationError) as excinfo:
        study.full_clean()
    assert "at least one identifier" in str(excinfo.value)
    with pytest.raises(IntegrityError), transaction.atomic():
        study.save()


def test_pasted_identifiers_are_tidied_before_validation():
    study = StudyFactory.build(
        pmid="PMID: 35657320", doi="https://doi.org/10.1056/NEJMoa2200075", nct_number="nct03057951"
    )
    study.full_clean()
    assert (study.pmid, study.doi, study.nct_number) == ("35657320", "10.1056/NEJMoa2200075", "NCT03057951")


@pytest.mark.parametrize(
    ("field", "first", "second", "message"),
    [
        ("pmid", "35657320", "35657320", "Another study already has this PMID."),
        ("doi", "10.1056/NEJMoa2200075", "10.1056/nejmoa2200075", "Another study already has this DOI"),
        ("nct_number", "NCT03057951", "NCT03057951", "Another study already has this NCT number."),
    ],
)
def test_identifiers_are_unique_across_studies(field, first, second, message):
    StudyFactory(**{field: first, **({"pmid": ""} if field != "pmid" else {})})
    duplicate = StudyFactory.build(**{field: second, **({"pmid": ""} if field != "pmid" else {})})
    with pytest.raises(ValidationError) as excinfo:
        duplicate.full_clean()
    assert message in str(excinfo.value)


def test_strength_orders_high_before_moderate_before_low():
    StudyFactory(study_name="low", evidence_strength=1)
    StudyFactory(study_name="high", evidence_strength=3)
    StudyFactory(study_name="moderate", evidence_strength=2)
    assert [s.study_name for s in Study.objects.all()] == ["high", "moderate", "low"]


def test_every_change_is_kept_in_history_and_revertible():
    study = StudyFactory(key_finding="first wording")
    study.key_finding = "second wording"
    study.save()
    assert study.history.count() == 2
    previous = study.history.earliest()
    previous.instance.save()
    study.refresh_from_db()
    assert study.key_finding == "first wording"
    assert study.history.count() == 3
