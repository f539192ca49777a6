"""Step 2, classify: the PICO's tags pick a classification rule (MeSH filters, anchor scenario)."""

from __future__ import annotations

from chat.pipeline.state import AnswerRun, TraceStep
from evidence.classification import classify, load_rules
from evidence.selectors import scenario_anchor_studies, scenario_title


def classify_question(run: AnswerRun) -> TraceStep:
    """Classify the question and load the anchor studies of its anchor scenario."""
    classification = classify(run.require_pico(), rules=load_rules())
    run.classification = classification
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
