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
    assert asking.startswith("whether he should take apixaban") and asking.endswith("this long?")
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


RUN_ON = (
    "74F with AF, CHA2DS2-VASc 4, admitted last month with a duodenal ulcer bleed treated endoscopically, Hb nadir "
    "7.2, transfused 2 units, now stable on PPI; she stopped apixaban on admission and her GP asks whether and when "
    "to restart it, given her eGFR of 41 and weight of 62 kg."
)


def test_a_case_with_no_question_mark_asks_in_its_reported_question():
    from evidence.sentences import asking_part

    assert asking_part(RUN_ON) == "whether and when to restart it, given her eGFR of 41 and weight of 62 kg."
    assert asking_part(STORY + "Is apixaban indicated?") == "Is apixaban indicated?"
    assert asking_part("apixaban dose in CKD4") == "apixaban dose in CKD4"


def test_the_decision_a_case_asks_about_is_its_primary_one_not_what_its_story_did(vocabulary):
    from evidence.pico import extract_pico_rules

    # "stopped apixaban" is what happened; restarting is what is asked, and it routes the case to the GI-bleeding
    # scenario rather than AF with CKD (the eGFR).
    pico = extract_pico_rules(RUN_ON, vocabulary=vocabulary)
    assert pico.primary_decision_tag == "restart", pico
