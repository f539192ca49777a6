"""Step 2, classify: the PICO's tags pick a classification rule (MeSH filters, anchor scenario)."""

from __future__ import annotations

from collections.abc import Sequence

from chat.pipeline.state import AnswerRun, TraceStep
from evidence.classification import classify, load_rules
from evidence.concepts import CONDITION
from evidence.question_parts import question_parts
from evidence.selectors import scenario_anchor_studies, scenario_title


def classify_question(run: AnswerRun) -> TraceStep:
    """Classify the question and load the anchor studies of its anchor scenario."""
    pico = run.require_pico()
    classification = classify(pico, rules=load_rules())
    run.classification = classification
    # The condition the matched scenario pairs with the question's decision is what the question is about.
    run.pico = pico.about(classification.condition)
    if run.pico is not pico and run.parts.is_case:
        # A case that named its history first ("HTN, T2DM, eGFR 55, AHRE up to 6 hours"): the conditions the scenario
        # is not about, nor broader or narrower than one it is, are the patient's, as a case's comorbidities are.
        _as_history(run, classification.scenario_tags)
    run.anchors = scenario_anchor_studies(scenario=classification.anchor_scenario or "")
    # The trace is read on the chat page: name the scenario by its title, not its key.
    scenario_title_text = scenario_title(scenario=classification.anchor_scenario or "")
    return TraceStep(
        "classify",
        "Classified the question",
        f"{classification.classification} (confidence {classification.confidence:.1f})"
        + (
            f"; anchor scenario {scenario_title_text} with {len(run.anchors)} anchor studies"
            if classification.anchor_scenario
            else "; no anchor scenario"
        )
        # MeSH headings carry commas ("Diabetes Mellitus, Type 2"): separated by ' | ' they cannot be misread.
        + (f"; excluded MeSH: {' | '.join(classification.excluded_mesh)}" if classification.excluded_mesh else ""),
        {**classification.to_dict(), "anchors": [study.study_name for study in run.anchors]},
    )


def _as_history(run: AnswerRun, scenario: Sequence[str]) -> None:
    vocabulary = run.vocabulary
    assert vocabulary is not None

    def related(code: str) -> bool:
        return any(
            code == tag or tag in vocabulary.broader_chain(code) or code in vocabulary.broader_chain(tag)
            for tag in scenario
        )

    run.concepts = [c for c in run.concepts if c.role != CONDITION or (c.code and related(c.code))]
    run.parts = question_parts(run.question, run.concepts)
