"""Decision-aid diagrams: every box rests on a curated finding, and an aid is shown only for a question it answers."""

from __future__ import annotations

import json
import re

import pytest
from django.db.models import ProtectedError

from chat.pipeline.result import decision_aid_payload
from evidence.decision_aids import decision_aids_for
from evidence.models import DecisionAid, DecisionStep, Finding
from evidence.pico import extract_pico_rules
from evidence.services.seed import SeedError
from evidence.services.seed_aids import AIDS_PATH, decision_aids_seed
from evidence.vocabulary import load_vocabulary
from tests.conftest import seed_library

pytestmark = pytest.mark.django_db

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.fixture
def seeded() -> None:
    seed_library()


def _aids(question: str) -> list[str]:
    vocabulary = load_vocabulary()
    pico = extract_pico_rules(question, vocabulary=vocabulary)
    return [aid.key or aid.title for aid in decision_aids_for(pico, vocabulary)]


def test_each_anchor_scenario_has_a_diagram_whose_boxes_state_only_their_findings_numbers(seeded) -> None:
    aids = DecisionAid.objects.exclude(key=None).prefetch_related("steps__finding")
    assert aids.count() == 6
    for aid in aids:
        assert not aid.image and aid.steps.count() >= 4, aid.key
        for step in aid.steps.all():
            finding = step.finding
            stated = f"{finding.statement} {finding.grade}"
            numbers = _NUMBER.findall(step.text)
            missing = [n for n in numbers if not re.search(rf"(?<![\d.]){re.escape(n)}(?!\d)", stated)]
            assert not missing, f"{aid.key}: {step.text!r} states {missing}, which its finding does not"


@pytest.mark.parametrize(
    ("question", "shown"),
    [
        ("AF with CKD stage 4, eGFR 22: which anticoagulant and what apixaban dose?", ["af-ckd-anticoagulation"]),
        ("Atrial fibrillation, CHA2DS2-VASc 3: which anticoagulant?", []),  # AF alone: the CKD doses do not apply
        ("Which antibiotic for community-acquired pneumonia in an outpatient?", ["cap-antibiotics"]),
        ("Device-detected AHRE of 3 hours, CHA2DS2-VASc 4: anticoagulate?", ["ahre-anticoagulation"]),
        ("GI bleed on low-dose aspirin for secondary prevention: continue aspirin?", ["gi-bleed-antithrombotics"]),
        ("GI bleed on apixaban: should the anticoagulant be reversed with andexanet?", ["gi-bleed-antithrombotics"]),
        ("After a GI bleed, when should apixaban be restarted?", []),  # the aid says nothing of that timing
        ("What is the best imaging for atrial fibrillation with CKD?", []),
    ],
)
def test_an_aid_is_shown_only_for_a_question_it_answers(seeded, question, shown) -> None:
    assert _aids(question) == shown


def test_the_answer_shows_each_box_with_its_study_link_and_review_status(seeded) -> None:
    vocabulary = load_vocabulary()
    pico = extract_pico_rules("AF and CKD 4: apixaban dose?", vocabulary=vocabulary)
    [aid] = decision_aids_for(pico, vocabulary)
    payload = decision_aid_payload(aid)
    assert payload["kind"] == "diagram" and payload["image_url"] == ""
    doses = payload["steps"][2]
    assert doses["text"].startswith("CrCl 31-50 mL/min: apixaban 5 mg twice daily")
    assert doses["study"] == "KDIGO Controversies Conference: CKD and arrhythmias"
    assert doses["url"].startswith("https://")
    assert doses["review"] == "curated finding, awaiting review"
    assert "apixaban 5 mg twice daily" in doses["finding"]


def test_the_seed_is_idempotent_and_keeps_a_curators_edit(seeded) -> None:
    assert str(decision_aids_seed()) == "0 created, 0 updated, 6 unchanged"
    step = DecisionStep.objects.get(aid__key="cap-antibiotics", position=5)
    step.text = "How long: at least 5 days, and until clinically stable."
    step._change_reason = "curator"
    step.save()
    counts = decision_aids_seed()
    assert (counts.kept_curator_edits, counts.unchanged) == (1, 5)
    assert DecisionStep.objects.get(pk=step.pk).text.startswith("How long: at least 5 days")
    assert decision_aids_seed(overwrite_curator_edits=True).updated == 1
    assert DecisionStep.objects.get(aid__key="cap-antibiotics", position=5).text.startswith("How long: until")


def test_a_box_without_a_seeded_finding_is_refused_and_nothing_is_written(seeded, tmp_path) -> None:
    data = json.loads(AIDS_PATH.read_text())
    data["decision_aids"][0]["key"] = "new-aid"
    data["decision_aids"][0]["steps"][1]["finding"] = "no-such-finding"
    path = tmp_path / "aids.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SeedError, match="new-aid: box 'CKD G1-G4"):
        decision_aids_seed(path=path)
    assert not DecisionAid.objects.filter(key="new-aid").exists()


def test_a_finding_a_box_rests_on_cannot_be_deleted_from_under_it(seeded) -> None:
    finding = DecisionStep.objects.first().finding
    with pytest.raises(ProtectedError):
        Finding.objects.filter(pk=finding.pk).delete()
