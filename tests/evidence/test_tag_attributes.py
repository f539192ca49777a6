"""How a question uses a tag is the tag's data (generic decision, modifier, patient wordings, the kind of answer
it asks for), not its code in code."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.core.exceptions import ValidationError

from evidence.concepts import question_concepts
from evidence.models import Tag
from evidence.pico import choose_primary_decision, choose_primary_disease, extract_pico_rules
from evidence.ranking import Candidate, relevance
from evidence.vocabulary import Vocabulary, load_vocabulary
from tests.conftest import seed_vocabulary
from tests.evidence.brain import seeded_lexicon, seeded_vocabulary


def _with(vocabulary: Vocabulary, code: str, **changes: object) -> Vocabulary:
    """The vocabulary with one tag's attributes changed, as a curator would in admin."""
    terms = dict(vocabulary.terms)
    terms[code] = replace(terms[code], **changes)
    return Vocabulary.from_terms(terms.values())


def test_a_generic_decision_is_the_main_one_only_when_nothing_more_specific_is_asked() -> None:
    vocabulary = seeded_vocabulary()
    assert choose_primary_decision(["therapy", "dose"], vocabulary) == "dose"
    assert choose_primary_decision(["therapy"], vocabulary) == "therapy"
    assert choose_primary_decision(["therapy", "dose"], _with(vocabulary, "therapy", is_generic=False)) == "therapy"


def test_a_modifier_is_never_the_main_condition_and_sharing_only_it_is_no_overlap() -> None:
    vocabulary = seeded_vocabulary()
    pico = extract_pico_rules("Stage III colon cancer: adjuvant chemotherapy for 3 or 6 months?", vocabulary=vocabulary)
    assert pico.disease_tags[0] == "stage_iii"
    assert pico.modifier_tags == ["stage_iii"]
    assert pico.primary_disease_tag != "stage_iii"
    assert "stage_iii" not in pico.condition_tags
    stage_only = Candidate(
        key="x",
        title="Another cancer at stage III",
        disease_tags=frozenset({"stage_iii"}),
        decision_tags=frozenset(pico.decision_tags),
        is_primary_study=True,
        is_review=False,
        source="pubmed",
    )
    same_condition = replace(stage_only, disease_tags=frozenset({"stage_iii", *pico.condition_tags}))
    assert relevance(stage_only, pico, vocabulary).score < relevance(same_condition, pico, vocabulary).score

    unmarked = _with(vocabulary, "stage_iii", is_modifier=False)
    assert choose_primary_disease(["stage_iii", "colon"], unmarked) == "stage_iii"
    assert extract_pico_rules("Stage III colon cancer: adjuvant chemotherapy?", vocabulary=unmarked).modifier_tags == []


def test_a_patient_wording_says_who_the_patients_are_not_what_is_asked() -> None:
    vocabulary = seeded_vocabulary()
    question = "Newly diagnosed type 2 diabetes: start metformin or an SGLT2 inhibitor?"
    assert "diagnosis" not in extract_pico_rules(question, vocabulary=vocabulary).decision_tags
    asked = extract_pico_rules("How is pulmonary embolism diagnosed?", vocabulary=vocabulary)
    assert "diagnosis" in asked.decision_tags

    plain = _with(vocabulary, "diagnosis", patient_wordings=())
    pico = extract_pico_rules(question, vocabulary=plain)
    assert "diagnosis" in pico.decision_tags
    concepts = question_concepts(question, vocabulary=plain, pico=pico, lexicon=seeded_lexicon())
    assert "diagnosis" in {concept.code for concept in concepts}


def test_a_disease_cannot_be_a_generic_decision_nor_a_decision_a_modifier() -> None:
    with pytest.raises(ValidationError, match="Only a decision tag"):
        Tag(code="x", kind="disease", label="x", is_generic=True).clean()
    with pytest.raises(ValidationError, match="Only a disease tag"):
        Tag(code="y", kind="decision", label="y", is_modifier=True).clean()
    tag = Tag(code="Z", kind="decision", label="z", patient_wordings=[" Diagnosed ", ""])
    tag.clean()
    assert (tag.code, tag.patient_wordings) == ("z", ["diagnosed"])


@pytest.mark.django_db
def test_the_seeded_attributes_load_and_a_curator_edit_applies_at_the_next_question() -> None:
    seed_vocabulary()
    vocabulary = load_vocabulary()
    assert {code for code in vocabulary.terms if vocabulary.is_generic(code)} == {
        "therapy",
        "drug_choice",
        "risk_stratification",
    }
    assert {code for code in vocabulary.terms if vocabulary.is_modifier(code)} == {
        "stage_i",
        "stage_ii",
        "stage_iii",
        "stage_iv",
        "tissue_free_assay",
    }
    assert vocabulary.terms["diagnosis"].patient_wordings == ("diagnosed",)

    Tag.objects.filter(code="risk_stratification").update(is_generic=False)
    assert not load_vocabulary().is_generic("risk_stratification")


def test_a_finding_only_about_a_narrower_group_of_the_condition_is_told_apart() -> None:
    vocabulary = seeded_vocabulary()
    trial = "In 4,012 patients with device-detected subclinical AF, apixaban reduced stroke versus aspirin."
    guideline = "In AF patients who are candidates for anticoagulation, choose a DOAC rather than warfarin."
    assert vocabulary.about_narrower(trial, {"af"}, {"af"})
    assert not vocabulary.about_narrower(guideline, {"af"}, {"af"})
    # A question that names the group ("device-detected subclinical AF") asks about it.
    assert not vocabulary.about_narrower(trial, {"af"}, {"af", "subclinical_af", "ahre"})
    assert not vocabulary.about_sibling(trial, {"af"}, {"af"})  # a narrower group is no sibling
    # Stated for the narrower group first, the finding is about it even when it names the condition later (as an
    # outcome); one stated for the condition first is about the condition.
    stated_for = "Consider anticoagulation for device-detected subclinical AF, weighing progression to clinical AF."
    assert vocabulary.about_narrower(stated_for, {"af"}, {"af"})
    assert not vocabulary.about_narrower("In AF, including subclinical AF, prefer a DOAC.", {"af"}, {"af"})
    # A condition named as absent is not whom a finding is stated for: this one is about AHRE without AF.
    without = "With no prior AF diagnosis, a device-detected atrial high-rate episode of 24 hours or more ..."
    assert vocabulary.about_narrower(without, {"af"}, {"af"})
    assert vocabulary.present_in(without) == ["ahre"]


def test_the_kind_of_answer_a_decision_asks_for_is_the_tags_data() -> None:
    vocabulary = seeded_vocabulary()
    kinds = {code: vocabulary.answer_kind(code) for code in vocabulary.terms if vocabulary.answer_kind(code)}
    assert kinds == {"drug_choice": "drug", "dose": "dose", "duration": "duration", "restart": "timing"}
    question = "restart apixaban after GI bleed - when?"
    pico = extract_pico_rules(question, vocabulary=vocabulary)
    restart = next(c for c in question_concepts(question, vocabulary=vocabulary, pico=pico, lexicon=seeded_lexicon())
                   if c.code == "restart")
    assert restart.answer_kind == "timing"
    # A curator who says "restart" asks for nothing in particular: the concept carries no kind.
    edited = _with(vocabulary, "restart", answer_kind="")
    concepts = question_concepts(question, vocabulary=edited, pico=pico, lexicon=seeded_lexicon())
    assert next(c for c in concepts if c.code == "restart").answer_kind == ""
    with pytest.raises(ValidationError, match="Only a decision tag asks"):
        Tag(code="x", kind="disease", label="x", answer_kind="dose").clean()


def test_a_finding_tagged_for_the_kind_asked_counts_as_on_the_decision() -> None:
    from chat.providers.composer import _decided
    from evidence.findings import CuratedFinding

    finding = CuratedFinding(shown="Give DAPT for 12 months.", review="", reviewed=False, locator="", source_url="",
                             decision_tags=("antiplatelet", "duration"), answer_kinds=("", "duration"))
    assert _decided(finding, frozenset({"antiplatelet"}), frozenset()) == 1
    assert _decided(finding, frozenset({"antiplatelet"}), frozenset({"duration"})) == 2  # "how long?" asked
    assert _decided(finding, frozenset(), frozenset({"dose"})) == 0


@pytest.mark.django_db
def test_the_seeded_answer_kinds_load_and_a_curator_edit_applies() -> None:
    seed_vocabulary()
    assert load_vocabulary().answer_kind("restart") == "timing"
    Tag.objects.filter(code="restart").update(answer_kind="")
    assert load_vocabulary().answer_kind("restart") == ""


def test_a_study_the_question_names_is_kept_whatever_its_tags_share_with_the_question() -> None:
    # "NOAH-AFNET 6 - stroke reduction?": stroke, an outcome, was the only disease tag, NOAH-AFNET 6 (tagged AF,
    # AHRE) shared none, and the answer abstained naming "reduction".
    from evidence.ranking import MIN_RELEVANCE, NAMED_FLOOR

    vocabulary = seeded_vocabulary()
    pico = extract_pico_rules("NOAH-AFNET 6 - stroke reduction?", vocabulary=vocabulary)
    noah = Candidate(
        key="noah",
        title="NOAH-AFNET 6",
        disease_tags=frozenset({"af", "ahre"}),
        decision_tags=frozenset({"anticoagulation"}),
        is_primary_study=True,
        is_review=False,
        source="library",
    )
    assert relevance(noah, pico, vocabulary).score < MIN_RELEVANCE
    named = relevance(replace(noah, is_named=True), pico, vocabulary)
    assert (named.score, named.band) == (NAMED_FLOOR, "named in the question")
    # A named study that shares more keeps the score its tags give it.
    af_pico = extract_pico_rules("NOAH-AFNET 6 in AF - anticoagulation?", vocabulary=vocabulary)
    shares = relevance(noah, af_pico, vocabulary)
    assert shares.score > NAMED_FLOOR
    assert relevance(replace(noah, is_named=True), af_pico, vocabulary) == replace(
        shares, candidate=replace(noah, is_named=True)
    )
