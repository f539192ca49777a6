"""The sentence-role model: shipped, intact, right on abstracts it never learnt from, and read by the composer."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from evidence.abstract_sections import abstract_sentences
from evidence.sentence_roles import (
    MODEL_DIR,
    ROLES,
    WEIGHTS_FILE,
    SentenceRoleModelError,
    SentenceRoles,
    feature_indices,
    sentence_roles,
)


@pytest.fixture(scope="module")
def heldout(shared_data):
    from training.sentence_roles import examples

    return examples(heldout=True)


def _read(model: SentenceRoles, rows) -> tuple[float, float]:
    truth = np.array([role for _, role, *_ in rows])
    predicted = np.array([
        int(np.argmax(model.scores(feature_indices(s, index=i, count=n, first_chunk=first))))
        for s, _, i, n, first in rows
    ])
    offered = predicted >= ROLES.index("results")
    return float((predicted == truth).mean()), float(offered[truth == ROLES.index("background")].mean())


def test_the_shipped_model_reads_held_out_abstracts(heldout) -> None:
    # PubMedQA's held-out third (never read by training): figures as the model card gives them.
    accuracy, background_offered = _read(sentence_roles(), heldout)
    assert accuracy >= 0.85 and background_offered <= 0.03


def test_random_weights_do_not_pass(heldout) -> None:
    shipped = sentence_roles()
    shuffled = SentenceRoles(np.random.default_rng(7).permutation(shipped.weights), shipped.bias)
    accuracy, _ = _read(shuffled, heldout)
    assert accuracy < 0.6


def test_missing_or_replaced_weights_stop_loading(tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(MODEL_DIR, copy)
    assert np.array_equal(SentenceRoles.load(copy).bias, sentence_roles().bias)
    with np.load(copy / WEIGHTS_FILE) as stored:
        arrays = dict(stored)
    arrays["weights"] = arrays["weights"][::-1].copy()
    np.savez_compressed(copy / WEIGHTS_FILE, **arrays)
    with pytest.raises(SentenceRoleModelError, match=r"training\.sentence_roles"):
        SentenceRoles.load(copy)
    (copy / WEIGHTS_FILE).unlink()
    with pytest.raises(SentenceRoleModelError, match="missing"):
        SentenceRoles.load(copy)


def test_start_up_stops_when_the_weights_are_missing(monkeypatch, tmp_path: Path) -> None:
    from django.apps import apps
    from django.core.exceptions import ImproperlyConfigured

    module = importlib.import_module("evidence.sentence_roles")  # the module ready() imports
    monkeypatch.setattr(module, "sentence_roles", lambda: SentenceRoles.load(tmp_path))
    with pytest.raises(ImproperlyConfigured, match="missing"):
        apps.get_app_config("evidence").ready()


# Written for this test, an unstructured abstract's opening chunk.
UNLABELLED = (
    "Statins have been shown to reduce the risk of stroke in middle-aged adults. "
    "Whether they benefit adults older than 75 years is uncertain. "
    "We randomly assigned 1200 patients aged 75 years or older to atorvastatin or placebo. "
    "Stroke occurred in 3.1% of the atorvastatin group and 4.9% of the placebo group (hazard ratio 0.63). "
    "Atorvastatin reduced stroke in adults older than 75 years."
)


def test_an_unlabelled_chunk_has_each_sentence_read_as_background_methods_results_or_conclusions() -> None:
    read = abstract_sentences(UNLABELLED, first_chunk=True)
    roles = [role for role, _ in read]
    assert roles[:4] == ["background", "background", "methods", "results"]
    assert roles[4] in ("results", "conclusions")
    # Labels the abstract gives, or a chunk's own section, are never second-guessed; nor is a chunk whose place is
    # not known.
    assert {role for role, _ in abstract_sentences(UNLABELLED, section="RESULTS", first_chunk=True)} == {"results"}
    assert {role for role, _ in abstract_sentences(UNLABELLED)} == {""}
    labelled = abstract_sentences("Intro. RESULTS: HR 0.79. Fewer events.", first_chunk=True)
    assert [role for role, _ in labelled] == ["", "results", "results"]


def test_the_composer_does_not_quote_the_background_of_an_unlabelled_abstract() -> None:
    # Walking the product on a store of unlabelled abstracts: "statins for primary prevention in adults over 75?"
    # was answered with an abstract's background sentence ("Statins have been shown to reduce the risk of stroke").
    from chat.answer_settings import AnswerSettings
    from chat.providers.composer import compose_answer
    from evidence.sources import EvidenceSet, EvidenceSource
    from evidence.text import content_terms

    source = EvidenceSource(
        doc_id="pmid:30000002", chunk_id="c0", origin="retrieved", title="T", pmid="30000002", text=UNLABELLED,
        approved=True,
    )
    question = "statins to prevent stroke in adults over 75?"
    answer = compose_answer(
        question=question, evidence=EvidenceSet([source]), settings=AnswerSettings(),
        question_terms=content_terms(question), weights={},
    )
    assert "have been shown" not in answer and "Whether they benefit" not in answer
    assert "Stroke occurred in 3.1%" in answer or "Atorvastatin reduced stroke" in answer.split("\n")[0]
