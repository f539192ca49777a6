"""The clinical-question model: shipped, intact, and right about questions written for this test."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from evidence.clinical_question import (
    MODEL_DIR,
    WEIGHTS_FILE,
    ClinicalQuestionModel,
    ClinicalQuestionModelError,
    clinical_question_model,
    reads_clinical,
)
from evidence.embedding import embedder

# Written for this test; none is in the training data or the benchmark sets.
CLINICAL = [
    "tamsulosin for ureteric stones - does it help passage?",
    "Does colchicine prevent recurrent pericarditis?",
    "best antiemetic in pregnancy with hyperemesis?",
    "ketamine vs etomidate for RSI in septic shock",
    "Should asymptomatic bacteriuria be treated in the elderly?",
    "Is there a role for hydroxyurea in sickle cell disease in children?",
    "How accurate is point-of-care ultrasound for appendicitis?",
    "Does early mobilisation after hip fracture surgery reduce delirium?",
]
GENERAL = [
    "What is the best way to store fresh basil?",
    "How many players are on a rugby union team?",
    "Which programming language should I learn first?",
    "Can you suggest a weekend itinerary for Lisbon?",
    "How do solar panels work?",
    "What time does the museum open on Sundays?",
    "How do I remove a red wine stain from a carpet?",
    "Who wrote Pride and Prejudice?",
]


def _accuracy(model: ClinicalQuestionModel) -> float:
    embed = embedder()
    read = [model.score(embed([q])[0]) >= model.threshold for q in [*CLINICAL, *GENERAL]]
    return (read[: len(CLINICAL)].count(True) + read[len(CLINICAL) :].count(False)) / len(read)


def test_the_shipped_model_tells_clinical_questions_from_general_ones() -> None:
    assert _accuracy(clinical_question_model()) == 1.0
    assert reads_clinical(CLINICAL[0]) and not reads_clinical(GENERAL[0])


def test_random_weights_do_not_pass() -> None:
    shipped = clinical_question_model()
    shuffled = ClinicalQuestionModel(
        np.random.default_rng(7).permutation(shipped.weights), shipped.bias, shipped.threshold
    )
    assert _accuracy(shuffled) < 0.8


def test_missing_or_replaced_weights_stop_loading(tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(MODEL_DIR, copy)
    assert ClinicalQuestionModel.load(copy).threshold == clinical_question_model().threshold
    with np.load(copy / WEIGHTS_FILE) as stored:
        arrays = dict(stored)
    arrays["weights"] = arrays["weights"][::-1].copy()
    np.savez_compressed(copy / WEIGHTS_FILE, **arrays)
    with pytest.raises(ClinicalQuestionModelError, match=r"training\.clinical_question"):
        ClinicalQuestionModel.load(copy)
    (copy / WEIGHTS_FILE).unlink()
    with pytest.raises(ClinicalQuestionModelError, match="missing"):
        ClinicalQuestionModel.load(copy)


def test_start_up_stops_when_the_weights_are_missing(monkeypatch, tmp_path: Path) -> None:
    from django.apps import apps
    from django.core.exceptions import ImproperlyConfigured

    module = importlib.import_module("evidence.clinical_question")  # the module ready() imports
    monkeypatch.setattr(module, "clinical_question_model", lambda: ClinicalQuestionModel.load(tmp_path))
    with pytest.raises(ImproperlyConfigured, match="missing"):
        apps.get_app_config("evidence").ready()
