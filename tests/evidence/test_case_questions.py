"""What a case asks: its asking sentences, and a reported question when its questions name no decision."""

import pytest

from evidence.case_questions import asked_conditions, asked_decisions, case_asking
from evidence.vocabulary import load_vocabulary
from tests.conftest import seed_vocabulary

pytestmark = pytest.mark.django_db

ASKED = (
    "His daughter asks whether he should take apixaban. What do the trials say for device-detected episodes this long?"
)
STORY = (
    "81M with a pacemaker for complete heart block, hypertension and type 2 diabetes, eGFR 55, on aspirin 75 mg. "
    "The last interrogation showed atrial high-rate episodes up to 6 hours long, never any AF on ECG. "
)


@pytest.fixture
def vocabulary(db):
    seed_vocabulary()
    return load_vocabulary()


def test_a_case_asking_only_for_a_kind_of_answer_asks_what_its_reported_question_asks(vocabulary):
    question = STORY + ASKED
    asking = case_asking(question, vocabulary)
    assert asking.startswith("His daughter asks whether") and asking.endswith("this long?")
    assert "anticoagulation" in asked_decisions(asking, vocabulary)
    # The story's comorbidities are the patient's, not what is asked.
    assert not asked_conditions(asking, vocabulary) & {"htn", "diabetes", "ckd"}


def test_a_comorbidity_named_first_is_not_what_a_case_asks_about(vocabulary):
    from evidence.concepts import Lexicon, question_concepts
    from evidence.pico import extract_pico

    question = STORY + ASKED
    pico = extract_pico(question, vocabulary=vocabulary)
    assert pico.primary_disease_tag == "htn"  # named first
    concepts = question_concepts(question, vocabulary=vocabulary, pico=pico, lexicon=Lexicon.load())
    conditions = {c.code for c in concepts if c.role == "condition"}
    assert "ahre" in conditions and not conditions & {"htn", "diabetes"}


def test_a_case_whose_question_names_its_decision_is_not_widened(vocabulary):
    question = STORY + "He wonders whether to wait and see. Is anticoagulation supported for device-detected episodes?"
    assert case_asking(question, vocabulary) == "Is anticoagulation supported for device-detected episodes?"
    # Without the vocabulary the direct questions stand alone, as before.
    direct = STORY + ASKED
    assert case_asking(direct) == "What do the trials say for device-detected episodes this long?"
    assert case_asking("AHRE 6 h - apixaban?", vocabulary) == ""
