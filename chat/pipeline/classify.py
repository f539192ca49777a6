"""Step 2, classify: the PICO's tags pick a classification rule (MeSH filters, anchor scenario)."""

from __future__ import annotations

from chat.pipeline.state import AnswerRun, TraceStep
from evidence.classification import classify, load_rules
from evidence.models import AnchorScenario, Study


def classify_question(run: AnswerRun) -> TraceStep:
    """Classify the question and load the anchor studies of its anchor scenario."""
    classification = classify(run.require_pico(), rules=load_rules())
    run.classification = classification
    run.anchors = (
        list(
            Study.objects.filter(anchor_scenarios__contains=[classification.anchor_scenario]).order_by(
                "-evidence_strength", "-publication_year", "study_name"
            )
        )
        if classification.anchor_scenario
        else []
    )
    # The trace is read on the chat page: name the scenario by its title, not its key.
    scenario_title = (
        AnchorScenario.objects.filter(key=classification.anchor_scenario).values_list("title", flat=True).first()
        if classification.anchor_scenario
        else None
    ) or classification.anchor_scenario
    return TraceStep(
        "classify",
        "Classified the question",
        f"{classification.classification} (confidence {classification.confidence:.1f})"
        + (
            f"; anchor scenario {scenario_title} with {len(run.anchors)} anchor studies"
            if classification.anchor_scenario
            else "; no anchor scenario"
        )
        # MeSH headings carry commas ("Diabetes Mellitus, Type 2"): separated by ' | ' they cannot be misread.
        + (f"; excluded MeSH: {' | '.join(classification.excluded_mesh)}" if classification.excluded_mesh else ""),
        {**classification.to_dict(), "anchors": [study.study_name for study in run.anchors]},
    )
