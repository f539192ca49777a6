"""The evidence app's models: the curated library and its findings, the tag vocabulary and its rules, decision aids."""

from evidence.models.decision_aids import DecisionAid, DecisionStep, _validate_image
from evidence.models.findings import Finding, ReviewStatus
from evidence.models.language import Word, WordClass
from evidence.models.library import (
    EvidenceStrength,
    GuidanceItem,
    IdentifierCheck,
    ResultContext,
    Study,
    StudyKind,
)
from evidence.models.vocabulary import Abbreviation, AnchorScenario, ClassificationRule, DrugClass, Tag, TagKind

__all__ = [
    "Abbreviation",
    "AnchorScenario",
    "ClassificationRule",
    "DecisionAid",
    "DecisionStep",
    "DrugClass",
    "EvidenceStrength",
    "Finding",
    "GuidanceItem",
    "IdentifierCheck",
    "ResultContext",
    "ReviewStatus",
    "Study",
    "StudyKind",
    "Tag",
    "TagKind",
    "Word",
    "WordClass",
    # Migration 0003 names this validator by its old path, evidence.models._validate_image.
    "_validate_image",
]
