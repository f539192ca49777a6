"""Level of evidence from publication types, design MeSH, library kinds and (inferred) design words; and
PubMed's retraction / concern links in every spelling."""

from __future__ import annotations

import pytest

from evidence.integrity import assess_integrity, notice_type
from evidence.levels import LEVEL_RANK, EvidenceLevel, assess_level, level_for_study_kind


@pytest.mark.parametrize(
    ("types", "mesh", "level"),
    [
        (["Journal Article", "Practice Guideline"], [], "guideline"),
        (["Consensus Development Conference"], [], "guideline"),
        (["Review", "Systematic Review", "Meta-Analysis"], [], "systematic_review"),
        (["Journal Article", "Randomized Controlled Trial", "Multicenter Study"], [], "rct"),
        (["Journal Article", "Observational Study"], [], "cohort"),
        (["Case Reports"], [], "case_series"),
        (["Journal Article", "Review"], [], "narrative_review"),
        (["Editorial"], [], "other"),
        (["Clinical Trial Protocol"], [], "other"),
        (["Journal Article"], ["Humans", "Cohort Studies"], "cohort"),
    ],
)
def test_stated_publication_types_and_design_headings_give_the_level(types, mesh, level):
    assessment = assess_level(publication_types=types, mesh_terms=mesh, title="Anything at all", abstract="")
    assert (assessment.level, assessment.inferred) == (level, False)


@pytest.mark.parametrize(
    ("title", "abstract", "level"),
    [
        ("Statins after stroke: a systematic review and meta-analysis", "", "systematic_review"),
        ("A randomized, double-blind, placebo-controlled trial of X in Y", "", "rct"),
        ("Outcomes of X", "Adults were randomly assigned to X or placebo. X lowered Y.", "rct"),
        ("Outcomes of X", "In this retrospective cohort of 2,000 adults, X was associated with Y.", "cohort"),
        ("A case of pulmonary X in a child", "", "case_series"),
        ("Outcomes of X", "We describe three patients who developed Y after X.", "case_series"),
        ("Clinical practice guideline for the management of X", "", "guideline"),
        ("Heart failure therapy: a review", "", "narrative_review"),
        # Another study's design in the background is not this study's design.
        ("Outcomes of X", "A previous meta-analysis suggested benefit. Randomised trials are lacking.", "other"),
        ("Guideline adherence after stroke: a cohort study", "", "cohort"),
    ],
)
def test_missing_types_fall_back_to_design_words_and_say_the_level_was_inferred(title, abstract, level):
    assessment = assess_level(publication_types=[], title=title, abstract=abstract)
    assert (assessment.level, assessment.inferred) == (level, True)
    assert assessment.badge.endswith("(inferred)")


def test_generic_types_alone_count_as_missing():
    assessment = assess_level(
        publication_types=["Journal Article", "Research Support, Non-U.S. Gov't"],
        title="A randomised trial of X versus Y",
    )
    assert (assessment.level, assessment.inferred, assessment.badge) == ("rct", True, "RCT (inferred)")


@pytest.mark.parametrize(
    ("kind", "design", "level"),
    [
        ("guideline", "", "guideline"),
        ("meta-analysis", "", "systematic_review"),
        ("systematic-review", "", "systematic_review"),
        ("trial", "Phase 3, double-blind, placebo-controlled randomised trial.", "rct"),
        ("trial", "Single-arm phase II trial of monitoring.", "other"),
        ("cohort", "Prospective observational registry.", "cohort"),
    ],
)
def test_library_kinds_map_to_levels_without_inference(kind, design, level):
    assessment = level_for_study_kind(kind=kind, study_design=design)
    assert (assessment.level, assessment.inferred) == (level, False)


def test_levels_rank_strongest_first():
    assert [level.value for level in sorted(EvidenceLevel, key=lambda lv: -LEVEL_RANK[lv])] == [
        "guideline", "systematic_review", "rct", "cohort", "case_series", "narrative_review", "other"
    ]


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("RetractionIn", "RetractionIn"),
        ("Retraction in", "RetractionIn"),
        ("retraction of", "RetractionOf"),
        ("Erratum in", "ErratumIn"),
        ("Expression of concern in", "ExpressionOfConcernIn"),
        ("CommentIn", ""),
        ("", ""),
    ],
)
def test_notice_types_are_read_in_efetch_and_esummary_spelling(raw, kind):
    assert notice_type(raw) == kind


def test_integrity_from_type_or_link_and_concern_apart_from_retraction():
    by_type = assess_integrity(publication_types=["Retracted Publication"], corrections=[])
    assert (by_type.retracted, by_type.expression_of_concern) == (True, False)
    assert by_type.summary() == "Retracted (PubMed type 'Retracted Publication')."
    by_link = assess_integrity(
        publication_types=["Journal Article"],
        corrections=[{"type": "RetractionIn", "pmid": "20137807"}, {"type": "ExpressionOfConcernIn", "pmid": "1"}],
    )
    assert by_link.summary() == "Retracted (retraction notice PMID 20137807); Expression of concern (PMID 1)."
    erratum = assess_integrity(publication_types=[], corrections=[{"type": "ErratumIn", "pmid": "5"}])
    assert (erratum.retracted, erratum.expression_of_concern, erratum.flagged) == (False, False, False)
    # The retraction notice itself is not a retracted article.
    notice = assess_integrity(publication_types=["Retraction of Publication"], corrections=[{"type": "RetractionOf"}])
    assert notice.retracted is False
