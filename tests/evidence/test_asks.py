"""What a question asks for: a size of effect is not a dose."""

import pytest

from evidence.asks import asked_for


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What dose of apixaban in CKD4?", ["dose"]),
        ("how much apixaban at eGFR 22?", ["dose"]),
        ("apixaban in AF on dialysis - how much?", ["dose"]),
        ("how much should I give an 80 kg man?", ["dose"]),
        # How big an effect is, not how much drug to give.
        ("apixaban for subclinical AF - how much extra major bleeding vs aspirin?", []),
        ("How much does DAPT length matter for bleeding?", []),
        # A choice between two amounts of a drug asks for its dose; between two scores or stages it does not.
        ("AF + CKD4, 81F 52 kg - apixaban 2.5 or 5?", ["dose"]),
        ("edoxaban 30 vs 60 mg at CrCl 40?", ["dose"]),
        ("eGFR 18, AF - is rivaroxaban 15 ok?", ["dose"]),
        ("apixaban 2.5 mg twice daily ok in an 85-year-old?", ["dose"]),
        ("on rivaroxaban 20, melena - major bleed?", []),
        ("CHA2DS2-VASc 2 or 3 - anticoagulate?", []),
        ("stage 2 or 3 CKD - SGLT2i?", []),
    ],
)
def test_how_much_asks_for_a_dose_only_about_a_drug(question, asks):
    assert [kind for kind in asked_for(question) if kind == "dose"] == asks


def test_a_follow_up_time_is_read_and_found_in_any_of_its_wordings() -> None:
    from evidence.asks import states_time_point, time_points

    assert time_points("still holds at 5 yrs?") == [(5, "year")]
    assert time_points("OS after 18 months?") == [(18, "month")]
    assert time_points("stage II colon cancer, 5 cm tumour") == []
    five = (5, "year")
    assert states_time_point(five, "5-year recurrence-free survival was 88%")
    assert states_time_point(five, "at 60 months, 12 patients had recurred")
    assert not states_time_point(five, "2-year recurrence-free survival was 93.5%")
    assert not states_time_point(five, "at 15 years, 40% had recurred")


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        # The story's doses and laboratory units are the patient's details; the last sentence asks.
        (
            "79F after NSTEMI with a DES yesterday, on aspirin 75 mg and ticagrelor, eGFR 28. "
            "Given her bleeding risk, how short can DAPT reasonably be? Her GP wants a clear plan.",
            ["duration"],
        ),
        (
            "69M with AF on warfarin, creatinine 1.4 mg/dL, urine ACR 40 mg/g. "
            "Should he switch to a DOAC, and which agent do the guidelines prefer?",
            ["drug"],
        ),
        # Without a question mark the whole text is what was asked; one sentence asking two things asks both.
        ("apixaban 2.5 mg or 5 mg in a dialysis patient", ["dose"]),
        ("AF + CKD4 (eGFR 22), 78F - DOAC or warfarin? apixaban dose?", ["dose"]),
        ("dose and for how long?", ["dose", "duration"]),
        # "when?" at the end asks when; "when" joining a clause does not.
        ("restart apixaban after GI bleed when?", ["timing"]),
        ("Which regimen for H pylori when the ulcer healed?", ["drug"]),
    ],
)
def test_what_a_case_asks_is_read_from_its_asking_sentences(question, asks):
    assert asked_for(question) == asks


def test_which_class_of_agent_asks_for_a_drug():
    assert asked_for("Should he switch from warfarin, and which class of agent do the guidelines prefer?") == ["drug"]


@pytest.mark.parametrize(
    "sentence",
    ["an SGLT2 inhibitor is a reasonable choice", "add a beta-blocker", "GLP-1 receptor agonists reduced weight"],
)
def test_a_drug_class_named_by_its_action_states_a_drug(sentence):
    from evidence.asks import states

    assert states("drug", sentence)
    assert not states("drug", "antibiotic treatment should last at least 5 days")


def test_asks_come_in_the_order_the_question_asks_them():
    assert asked_for("for how long, and which regimen?") == ["duration", "drug"]
    assert asked_for("which regimen, and for how long?") == ["drug", "duration"]


def test_shorthand_in_the_asking_part_is_read_spelled_out():
    from evidence.lexicon import Lexicon

    lexicon = Lexicon.build([("abx", ["antibiotics"], False), ("DOAC", ["direct oral anticoagulant"], True)])
    assert lexicon.spelled_inline("outpt CAP - which abx?") == "outpt CAP - which antibiotics?"
    assert asked_for("outpt CAP - which abx?") == []
    assert asked_for("outpt CAP - which abx?", lexicon) == ["drug"]
    assert asked_for("AF and CKD4 - which DOAC?", lexicon) == ["drug"]
    # Spelled out, a word that is no ask stays no ask.
    assert asked_for("abx for CAP - worth it?", lexicon) == []


@pytest.mark.parametrize(
    ("sentence", "dose"),
    [
        ("apixaban 2.5 mg twice daily", True),
        ("atezolizumab 1680 mg every 4 weeks", True),
        ("vancomycin 15 mg/kg", True),
        ("aspirin 100 mg/day", True),
        # A concentration or ratio is a measurement of the patient, not an amount of drug.
        ("when urine ACR is at least 200 mg/g (20 mg/mmol)", False),
        ("a fall in haemoglobin of 2 g/dL or more", False),
        ("in patients with eGFR 30 mL/min or more", False),
    ],
)
def test_a_concentration_is_not_a_dose(sentence, dose):
    from evidence.asks import states

    assert states("dose", sentence) is dose


@pytest.mark.parametrize(
    ("sentence", "duration"),
    [
        ("switching to single antiplatelet therapy after only 1 month of DAPT", True),
        ("the default strategy remains 12 months of DAPT", True),
        ("antibiotics for 5-7 days", True),
        # A window for when something happened, in a list of criteria, says nothing of how long to treat.
        ("spontaneous bleeding needing transfusion within 6 months, or cancer within 12 months", False),
    ],
)
def test_a_window_before_now_is_no_treatment_duration(sentence, duration):
    from evidence.asks import states

    assert states("duration", sentence) is duration


@pytest.mark.parametrize(
    ("question", "timing"),
    [
        ("GI bleed on apixaban - when to restart?", True),
        ("when is it safe to restart apixaban?", True),
        ("when is apixaban restarted after a bleed?", True),
        # In which patients, not at what time.
        ("outpt CAP - when is azithro monotherapy still OK?", False),
        ("when is surgery indicated in severe AS?", False),
    ],
)
def test_when_is_it_ok_asks_in_which_patients_not_when(question, timing):
    assert ("timing" in asked_for(question)) is timing


FINDING = (
    "Randomised data on anticoagulation are lacking below CrCl 30 mL/min. At CrCl 15-30, apixaban 2.5 mg twice daily "
    "or rivaroxaban 15 mg could be considered. In G5/G5D, consider apixaban 2.5 mg twice daily."
)


@pytest.mark.parametrize(
    ("asks", "kidney", "first"),
    [
        (["dose"], None, "At CrCl 15-30"),
        # For a patient on dialysis, the sentence stated for dialysis; never one stated only for other patients.
        (["dose"], (0.0, 14.0), "In G5/G5D"),
        (["dose"], (40.0, 40.0), "Randomised data"),
        # Nothing asked, or the first sentence already states as much: the finding reads as written.
        ([], None, "Randomised data"),
        (["threshold"], None, "Randomised data"),
    ],
)
def test_a_finding_leads_with_its_sentence_that_states_what_was_asked(asks, kidney, first):
    from evidence.asks import asked_first

    text = asked_first(FINDING, asks, kidney)
    assert text.startswith(first)
    sentences = sorted(part.rstrip(".") for part in text.split(". "))
    assert sentences == sorted(part.rstrip(".") for part in FINDING.split(". "))  # every sentence kept, none twice


def test_a_sentence_that_leans_on_the_one_before_is_not_moved():
    from evidence.asks import asked_first

    text = "Apixaban lowered stroke in the trial. Of these patients, 30% took 2.5 mg twice daily."
    assert asked_first(text, ["dose"]) == text


def test_a_question_naming_only_decisions_that_ask_for_a_kind_asks_for_it():
    from evidence.concepts import Concept

    drugs = Concept("antibiotics", "decision", (("antibiot",),), code="drug_choice", generic=True, answer_kind="drug")
    stopping = Concept("de-escalation", "decision", (("stop",),), code="de-escalation")
    condition = Concept("community-acquired pneumonia", "condition", (("cap",),), code="cap")
    # "CAP in the ICU: empirical antibiotics?" asks which antibiotics, though no word says "which".
    assert asked_for("CAP in the ICU: empirical antibiotics?", concepts=[condition, drugs]) == ["drug"]
    # "stop abx after day 5?" is about stopping them, a decision that asks for no kind: no drug is asked for.
    assert asked_for("CAP, stable - stop abx after day 5?", concepts=[condition, stopping, drugs]) == []
    # A decision worded by the drug itself names the drug: "does dapagliflozin benefit ...?" asks whether.
    dapagliflozin = Concept("dapagliflozin", "decision", (("dapagliflozin",),), code="drug_choice", answer_kind="drug")
    assert asked_for("Does dapagliflozin benefit HFpEF?", concepts=[condition, dapagliflozin]) == []
    # A question asking whether ("Do we need ...?") asks for no kind of answer its words do not name.
    assert asked_for("Do we need prophylactic abx for a port?", concepts=[drugs]) == []
    assert asked_for("CAP, septic shock - should we start antibiotics?", concepts=[condition, drugs]) == []
    # What the question's own words ask for comes first.
    assert asked_for("empirical antibiotics - for how long?", concepts=[condition, drugs]) == ["duration"]


def test_a_sentence_is_on_a_decision_when_it_names_it_or_states_what_it_asks_for():
    from evidence.asks import on_decisions
    from evidence.concepts import Concept

    sglt2 = Concept("sglt2 inhibitor", "decision", (("sglt2", "inhibitor"),), code="drug_choice", answer_kind="drug")
    duration = Concept("treatment duration", "decision", (("durat",),), code="duration", answer_kind="duration")
    assert on_decisions("Give an SGLT2 inhibitor to adults with CKD and an ACR of 200 mg/g or more.", [sglt2])
    # Naming another drug is no answer to which drug.
    assert not on_decisions("In AF with CKD, use a NOAC rather than warfarin.", [sglt2])
    # A duration states how long without saying "duration".
    assert on_decisions("The default is 12 months of DAPT.", [duration])
    assert not on_decisions("Prasugrel is preferred to clopidogrel.", [duration])
    assert on_decisions("Anything at all.", [])
