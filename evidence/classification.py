"""Deterministic classification of a question from its tags, by the curated rules in the database."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from evidence.models import AnchorScenario, ClassificationRule
from evidence.pico import Pico
from evidence.table_digest import ReadPerChange, table_digests

UNCLASSIFIED = "General clinical question"


@dataclass(frozen=True)
class Rule:
    name: str
    classification: str
    disease_tags: tuple[str, ...]
    decision_tags: tuple[str, ...]
    allowed_mesh: tuple[str, ...]
    excluded_mesh: tuple[str, ...]
    anchor_scenario: str | None
    priority: int
    scenario_tags: tuple[str, ...] = ()  # the disease tags of its anchor scenario


@dataclass(frozen=True)
class Classification:
    classification: str
    rule: str | None
    confidence: float
    anchor_scenario: str | None
    allowed_mesh: list[str] = field(default_factory=list)
    excluded_mesh: list[str] = field(default_factory=list)
    # The condition the question is about: its primary one, unless the matched rule's anchor scenario is about others
    # of its conditions and not that one (`classify`).
    condition: str | None = None
    scenario_tags: list[str] = field(default_factory=list)  # the disease tags of the matched anchor scenario

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_LOADED: ReadPerChange[tuple[Rule, ...]] = ReadPerChange()  # the rules last read, by the tables' digest


def load_rules() -> list[Rule]:
    """Return the curated classification rules, highest priority first: one small query while no rule or anchor
    scenario changed since the last question (`table_digest`), the rules when one did."""
    digest = table_digests(ClassificationRule._meta.db_table, AnchorScenario._meta.db_table)
    return list(_LOADED.get(digest, _read_rules))


def _read_rules() -> tuple[Rule, ...]:
    return tuple(
        Rule(
            name=row.name,
            classification=row.classification,
            disease_tags=tuple(row.disease_tags),
            decision_tags=tuple(row.decision_tags),
            allowed_mesh=tuple(row.allowed_mesh),
            excluded_mesh=tuple(row.excluded_mesh),
            anchor_scenario=row.anchor_scenario.key if row.anchor_scenario else None,
            priority=row.priority,
            scenario_tags=tuple(row.anchor_scenario.disease_tags) if row.anchor_scenario else (),
        )
        for row in ClassificationRule.objects.select_related("anchor_scenario").order_by("-priority", "name")
    )


def _matches(rule: Rule, pico: Pico) -> bool:
    diseases, decisions = set(pico.disease_tags), set(pico.decision_tags)
    return set(rule.disease_tags) <= diseases and (not rule.decision_tags or bool(decisions & set(rule.decision_tags)))


# A rule that covers what the question is mainly about beats a higher-priority rule that does not.
PRIMARY_COVERAGE_BONUS = 50


def rule_score(rule: Rule, pico: Pico) -> int:
    """Return the rule's priority plus a bonus for covering the primary disease and the primary decision."""
    score = rule.priority
    if pico.primary_disease_tag in rule.disease_tags:
        score += PRIMARY_COVERAGE_BONUS
    if pico.primary_decision_tag in rule.decision_tags:
        score += PRIMARY_COVERAGE_BONUS
    return score


def classify(pico: Pico, *, rules: Sequence[Rule]) -> Classification:
    """Return the classification of the best matching rule, with a confidence.

    Rules are ranked by `rule_score`, then by how many tags they name. Confidence: 0.6 for a
    disease-only match, +0.3 when a decision tag matches, +0.1 when the rule covers the
    question's primary disease.
    """
    matching = [rule for rule in rules if rule.disease_tags and _matches(rule, pico)]
    if not matching:
        return Classification(
            UNCLASSIFIED, None, 0.2 if pico.disease_tags else 0.0, None, condition=pico.primary_disease_tag
        )
    best = max(matching, key=lambda r: (rule_score(r, pico), len(r.disease_tags), len(r.decision_tags), r.name))
    # A question that names the patient's history first ("HTN, T2DM, ... AHRE up to 6 hours - apixaban?") is about
    # the condition of the curated scenario it matched, not the first one it names.
    condition = pico.primary_disease_tag
    if condition not in best.scenario_tags:
        condition = next((tag for tag in pico.condition_tags if tag in best.scenario_tags), condition)
    confidence = 0.6
    if set(best.decision_tags) & set(pico.decision_tags):
        confidence += 0.3
    if pico.primary_disease_tag in best.disease_tags:
        confidence += 0.1
    return Classification(
        classification=best.classification,
        rule=best.name,
        confidence=round(confidence, 2),
        anchor_scenario=best.anchor_scenario,
        allowed_mesh=list(best.allowed_mesh),
        excluded_mesh=list(best.excluded_mesh),
        condition=condition,
        scenario_tags=list(best.scenario_tags),
    )
