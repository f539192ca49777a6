import json

import pytest
from django.urls import reverse

from evidence.classification import classify, load_rules
from evidence.models import AnchorScenario, ClassificationRule, Tag
from evidence.pico import extract_pico_rules
from evidence.services.vocabulary_seed import vocabulary_seed
from evidence.vocabulary import load_vocabulary
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_vocabulary_seed_is_idempotent_and_links_broader_tags():
    first = vocabulary_seed()
    assert (first.tags.created, first.scenarios.created, first.rules.created) == (56, 6, 13)
    history = Tag.history.count()
    second = vocabulary_seed()
    assert (second.tags.created, second.tags.updated, second.tags.unchanged) == (0, 0, 56)
    assert Tag.history.count() == history
    assert Tag.objects.get(code="hfpef").broader.code == "heart_failure"
    # Stable CAD and ACS are two populations under coronary artery disease; a stent is a procedure under none.
    assert Tag.objects.get(code="ccs").broader.code == Tag.objects.get(code="acs").broader.code == "cad"
    assert Tag.objects.get(code="pci").broader is None
    assert ClassificationRule.objects.get(name="af-ckd-anticoagulation").anchor_scenario.key == "af_ckd_anticoagulation"
    assert AnchorScenario.objects.count() == 6


def test_vocabulary_seed_keeps_curator_edits():
    vocabulary_seed()
    tag = Tag.objects.get(code="af")
    tag.synonyms = [*tag.synonyms, "auricular fibrillation"]
    tag.save()
    result = vocabulary_seed()
    assert result.tags.kept == 1
    assert "auricular fibrillation" in Tag.objects.get(code="af").synonyms


def test_a_curator_added_tag_is_used_without_a_code_change():
    vocabulary_seed()
    Tag.objects.create(code="gout", kind="disease", label="gout", synonyms=["gout", "gouty arthritis"])
    pico = extract_pico_rules("Colchicine dose for gouty arthritis in CKD?", vocabulary=load_vocabulary())
    assert pico.disease_tags == ["gout", "ckd"]
    assert pico.primary_disease_tag == "gout"


def test_rules_from_the_database_classify_af_ckd():
    vocabulary_seed()
    pico = extract_pico_rules("Should apixaban be dose-reduced in AF with CKD?", vocabulary=load_vocabulary())
    result = classify(pico, rules=load_rules())
    assert result.rule == "af-ckd-anticoagulation"
    assert result.anchor_scenario == "af_ckd_anticoagulation"
    assert result.confidence == 1.0


def test_a_case_naming_its_history_first_is_about_the_condition_of_the_scenario_it_matched():
    vocabulary_seed()
    vocabulary = load_vocabulary()
    pico = extract_pico_rules("81M with HTN, T2DM and AHRE up to 6 hours - apixaban?", vocabulary=vocabulary)
    assert pico.primary_disease_tag == "htn"
    result = classify(pico, rules=load_rules())
    assert (result.anchor_scenario, result.condition) == ("ahre_anticoagulation", "ahre")
    assert pico.about(result.condition).secondary_disease_tags == ["htn", "diabetes"]
    # A condition of the scenario named first stays the question's: CKD leads AF in the AF-with-CKD scenario.
    pico = extract_pico_rules("CKD4 with AF - which anticoagulant?", vocabulary=vocabulary)
    assert classify(pico, rules=load_rules()).condition == pico.primary_disease_tag == "ckd"
    # A rule without an anchor scenario moves nothing (ctDNA is the test, bladder cancer the condition).
    pico = extract_pico_rules("Bladder cancer, ctDNA+ after cystectomy - adjuvant therapy?", vocabulary=vocabulary)
    assert classify(pico, rules=load_rules()).condition == pico.primary_disease_tag == "bladder"


def test_curators_edit_the_vocabulary_in_admin_and_viewers_cannot(client):
    vocabulary_seed()
    client.force_login(UserFactory(username="cur", is_staff=True, groups=["curator"]))
    listing = client.get(reverse("admin:evidence_tag_changelist"), {"q": "fibrillation"})
    assert listing.status_code == 200
    assert {t.code for t in listing.context["cl"].result_list} >= {"af", "ahre"}
    assert client.get(reverse("admin:evidence_classificationrule_changelist")).status_code == 200
    assert client.get(reverse("admin:evidence_decisionaid_add")).status_code == 200
    client.force_login(UserFactory(username="view", is_staff=True))
    assert client.get(reverse("admin:evidence_tag_add")).status_code == 403


def test_a_term_has_one_usual_reading_and_its_other_senses_say_when(tmp_path):
    from django.core.exceptions import ValidationError

    from evidence.models import Abbreviation

    Abbreviation.objects.create(term="MS", expansions=["multiple sclerosis"], case_sensitive=True)
    second_usual = Abbreviation(term="MS", expansions=["mitral stenosis"], case_sensitive=True)
    with pytest.raises(ValidationError, match="already has a usual reading"):
        second_usual.full_clean()
    same_sense = Abbreviation(term="MS", expansions=["multiple sclerosis", "MS"], case_sensitive=True, context=["x"])
    with pytest.raises(ValidationError, match="already has a sense read as 'multiple sclerosis'"):
        same_sense.full_clean()
    valve = Abbreviation(term="MS", expansions=["mitral stenosis"], case_sensitive=True, context=[" valve ", "TAVR"])
    valve.full_clean()
    valve.save()
    assert valve.context == ["valve", "TAVR"]
    # "ms" written case-blind is another term: it does not compete with the capitalised one.
    Abbreviation(term="ms", expansions=["milliseconds"]).full_clean()


def test_seeding_a_second_sense_adds_a_row_and_a_reworded_sense_is_still_found(tmp_path):
    from evidence.models import Abbreviation
    from evidence.services.vocabulary_seed import VOCABULARY_PATH

    data = json.loads(VOCABULARY_PATH.read_text())
    data["abbreviations"] = [
        {"term": "PD", "expansions": ["Parkinson disease"], "case_sensitive": True},
        {"term": "PD", "expansions": ["peritoneal dialysis"], "case_sensitive": True, "context": ["dialysis", "ESRD"]},
    ]
    path = tmp_path / "vocabulary.json"
    path.write_text(json.dumps(data))
    first = vocabulary_seed(path=path)
    assert (first.abbreviations.created, first.abbreviations.updated) == (2, 0)
    dialysis = Abbreviation.objects.get(term="PD", expansions__0="peritoneal dialysis")
    dialysis.expansions = ["peritoneal dialysis (PD)", "peritoneal dialysis"]
    dialysis.save()
    again = vocabulary_seed(path=path)
    assert (again.abbreviations.created, again.abbreviations.kept, again.abbreviations.unchanged) == (0, 1, 1)
    assert Abbreviation.objects.filter(term="PD").count() == 2
