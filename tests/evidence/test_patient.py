"""What a question says of its patient is read once, where the question is understood."""

from evidence.patient import PatientDetails, patient_details


def test_the_patients_kidney_function_episode_stage_and_follow_up_time_are_read_together() -> None:
    details = patient_details("stage III colon ca, eGFR 22 - does the benefit still hold at 5 yrs?")
    assert (details.kidney, details.stage, details.time_points) == ((22.0, 22.0), 3, ((5, "year"),))
    assert patient_details("AHRE 3 min - anticoagulate?").duration == (3.0, 3.0)
    assert patient_details("HFpEF - which drugs?") == PatientDetails()
    assert patient_details("CHA2DS2-VASc 1 in a 60M with AF - OAC?").risk_score == (1, "m")


def test_a_kidney_stage_spelled_out_is_no_disease_stage() -> None:
    # The patient is read with the shorthand spelled out, and "CKD4" becomes "chronic kidney disease stage 4": read as a
    # disease stage, it was stage 4.
    details = patient_details("atrial fibrillation + chronic kidney disease stage 4, 81F - apixaban 2.5 or 5?")
    assert (details.stage, details.kidney) == (None, (15, 29))
    assert patient_details("stage 4 colon cancer with chronic kidney disease - adjuvant?").stage == 4


def test_the_composer_reads_the_patient_the_pipeline_read_not_the_question_again() -> None:
    # The understanding step reads the patient once (`AnswerRun.patient`); a follow-up's own words ("dose?") say
    # nothing of the kidney function its conversation gave, and the composer must not read them again.
    from chat.answer_settings import AnswerSettings
    from chat.providers.composer import compose_answer
    from evidence.sources import EvidenceSet, EvidenceSource
    from evidence.text import content_terms

    text = (
        "RESULTS: At CrCl 31-50 mL/min, apixaban 5 mg twice daily was given. "
        "At CrCl 15-30 mL/min, apixaban 2.5 mg twice daily was given."
    )
    source = EvidenceSource(
        doc_id="pmid:30000001", chunk_id="c0", origin="retrieved", title="T", pmid="30000001", text=text, approved=True
    )

    def lead(patient: PatientDetails | None) -> str:
        answer = compose_answer(
            question="apixaban dose?",
            evidence=EvidenceSet([source]),
            settings=AnswerSettings(),
            question_terms=content_terms("apixaban dose"),
            weights={},
            patient=patient,
        )
        return answer.split("\n")[0]

    assert "CrCl 15-30" in lead(PatientDetails(kidney=(22.0, 22.0)))
    assert "CrCl 31-50" in lead(PatientDetails(kidney=(40.0, 40.0)))


def test_findings_stated_only_for_another_stage_or_episode_length_are_for_other_patients() -> None:
    from evidence.patient import stated_for_others

    stage_three = patient_details("stage III colon cancer, ctDNA+ - adjuvant?")
    assert stated_for_others(stage_three, [("In stage II colon cancer, ctDNA guidance was noninferior.", "")])
    assert not stated_for_others(stage_three, [("In stage II-III colon cancer, ctDNA predicted relapse.", "")])
    assert not stated_for_others(stage_three, [("In stage II disease it was noninferior.", ""),
                                               ("ctDNA predicted relapse.", "")])
    no_stage = patient_details("colon cancer, ctDNA+ - adjuvant?")
    assert not stated_for_others(no_stage, [("In stage II colon cancer.", "")])
    assert not stated_for_others(stage_three, [])


def test_a_finding_that_names_no_stage_is_about_whom_its_study_enrolled() -> None:
    from evidence.patient import fitted, stated_for_others

    stage_three = patient_details("stage III colon ca, ctDNA+ 4 wks post-op - chance of relapse?")
    finding = "Detectable ctDNA after adjuvant chemotherapy was associated with worse recurrence-free survival."
    stage_two_cohort = "Circulating tumor DNA analysis predicts recurrence in patients with stage II colon cancer"
    registry = "ctDNA-based molecular residual disease and survival in resectable colorectal cancer"
    assert fitted(stage_three, finding)[1] is None
    assert fitted(stage_three, finding, stage_two_cohort)[1] is False
    assert fitted(stage_three, finding, registry)[1] is None
    # What the sentence states decides before its study's title: a stage III subgroup of a mixed study fits.
    assert fitted(stage_three, "In stage III disease, ctDNA predicted relapse.", stage_two_cohort)[1] is True
    assert stated_for_others(stage_three, [(finding, stage_two_cohort)])
    assert not stated_for_others(stage_three, [(finding, stage_two_cohort), (finding, registry)])


def test_a_finding_stated_only_for_another_care_setting_is_for_other_patients() -> None:
    from evidence.patient import stated_for_others

    icu = patient_details("CAP admitted to ICU - which abx?")
    assert icu.setting == "critical_care"
    outpatients = "For previously healthy outpatients with CAP, prescribe amoxicillin 1 g three times daily."
    assert stated_for_others(icu, [(outpatients, "")])
    assert not stated_for_others(icu, [(outpatients, ""), ("In severe CAP, give a beta-lactam plus a macrolide.", "")])
    assert not stated_for_others(patient_details("CAP - which abx?"), [(outpatients, "")])
