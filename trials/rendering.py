"""Trials as an LLM reads them (plain text) and as pages and the API read them (payload dicts)."""

from __future__ import annotations

from typing import Any

from evidence.identifiers import ctgov_url
from trials.constants import SEX_LABELS, phase_label, status_label
from trials.models import Trial
from trials.parsers import StudySummary, unescape_markup

PAYLOAD_TYPE = "trial_details"
# Long criteria lists would crowd out the rest of a prompt; the URL leads to the full text.
TEXT_CRITERIA_MAX_CHARS = 2500
TEXT_OUTCOMES_MAX = 10
NOT_REPORTED = "not reported"


def age_range(minimum: str, maximum: str) -> str:
    """Return "18 Years to 64 Years", "18 Years and older", "up to 17 Years" or "not reported"."""
    if minimum and maximum:
        return f"{minimum} to {maximum}"
    if minimum:
        return f"{minimum} and older"
    if maximum:
        return f"up to {maximum}"
    return NOT_REPORTED


def enrollment_text(count: int | None, kind: str) -> str:
    if count is None:
        return NOT_REPORTED
    noun = "participant" if count == 1 else "participants"
    return f"{count} {noun} ({kind.lower()})" if kind else f"{count} {noun}"


def _truncate(text: str, *, limit: int, url: str) -> str:
    text = unescape_markup(text)
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n[… truncated; full criteria at {url}]"


def _healthy_volunteers(value: bool | None) -> str:
    if value is None:
        return NOT_REPORTED
    return "accepted" if value else "not accepted"


def interventions_text(interventions: list[dict[str, str]]) -> str:
    names = [
        f"{item['type'].replace('_', ' ').capitalize()}: {item['name']}" if item.get("type") else item["name"]
        for item in interventions
    ]
    return "; ".join(names) or NOT_REPORTED


def trial_text(trial: Trial, *, stale: bool = False) -> str:
    """Render a trial for an LLM: title, phase, status, sponsor, enrollment, eligibility, outcomes."""
    url = ctgov_url(trial.nct_id)
    lines = [f"ClinicalTrials.gov {trial.nct_id}: {trial.brief_title or '(no title)'}"]
    if trial.official_title and trial.official_title != trial.brief_title:
        lines.append(f"Official title: {trial.official_title}")
    lines += [
        f"URL: {url}",
        f"Phase: {phase_label(trial.phases) or NOT_REPORTED}",
        f"Status: {status_label(trial.overall_status) if trial.overall_status else NOT_REPORTED}",
        f"Study type: {trial.study_type.capitalize() if trial.study_type else NOT_REPORTED}",
        f"Lead sponsor: {trial.lead_sponsor or NOT_REPORTED}",
        f"Enrollment: {enrollment_text(trial.enrollment, trial.enrollment_type)}",
        f"Conditions: {'; '.join(trial.conditions) or NOT_REPORTED}",
        f"Interventions: {interventions_text(trial.interventions)}",
        f"Start date: {trial.start_date or NOT_REPORTED}; completion date: {trial.completion_date or NOT_REPORTED}",
        (
            f"Eligibility: sex {SEX_LABELS.get(trial.sex, trial.sex) if trial.sex else NOT_REPORTED}; "
            f"ages {age_range(trial.minimum_age, trial.maximum_age)}; "
            f"healthy volunteers {_healthy_volunteers(trial.healthy_volunteers)}"
        ),
    ]
    if trial.inclusion_criteria or trial.exclusion_criteria:
        for heading, text in (
            ("Inclusion", trial.inclusion_criteria),
            ("Exclusion", trial.exclusion_criteria),
        ):
            body = _truncate(text, limit=TEXT_CRITERIA_MAX_CHARS, url=url) if text else NOT_REPORTED
            lines += [f"{heading} criteria:", body]
    else:
        body = trial.eligibility_criteria
        lines += [
            "Eligibility criteria:",
            _truncate(body, limit=TEXT_CRITERIA_MAX_CHARS, url=url) if body else NOT_REPORTED,
        ]
    lines.append("Primary outcomes:")
    if trial.primary_outcomes:
        for number, outcome in enumerate(trial.primary_outcomes[:TEXT_OUTCOMES_MAX], start=1):
            time_frame = f" (time frame: {outcome['time_frame']})" if outcome.get("time_frame") else ""
            lines.append(f"{number}. {unescape_markup(outcome['measure'])}{time_frame}")
        hidden = len(trial.primary_outcomes) - TEXT_OUTCOMES_MAX
        if hidden > 0:
            lines.append(f"[… {hidden} more primary outcomes at {url}]")
    else:
        lines.append(NOT_REPORTED)
    if stale:
        lines.append(f"Note: cached copy fetched {trial.fetched_at:%Y-%m-%d}; ClinicalTrials.gov could not be reached.")
    return "\n".join(lines)


def trial_payload(trial: Trial, *, stale: bool = False) -> dict[str, Any]:
    """Return the `trial_details` payload: the structured trial for pages, the API and the chat."""
    return {
        "type": PAYLOAD_TYPE,
        "nct_id": trial.nct_id,
        "url": ctgov_url(trial.nct_id),
        "brief_title": trial.brief_title,
        "official_title": trial.official_title,
        "brief_summary": trial.brief_summary,
        "study_type": trial.study_type,
        "phases": list(trial.phases),
        "phase_label": phase_label(trial.phases),
        "overall_status": trial.overall_status,
        "status_label": status_label(trial.overall_status) if trial.overall_status else "",
        "lead_sponsor": trial.lead_sponsor,
        "enrollment": trial.enrollment,
        "enrollment_type": trial.enrollment_type,
        "conditions": list(trial.conditions),
        "interventions": list(trial.interventions),
        "eligibility": {
            "criteria": trial.eligibility_criteria,
            "inclusion": trial.inclusion_criteria,
            "exclusion": trial.exclusion_criteria,
            "minimum_age": trial.minimum_age,
            "maximum_age": trial.maximum_age,
            "sex": trial.sex,
            "healthy_volunteers": trial.healthy_volunteers,
        },
        "primary_outcomes": list(trial.primary_outcomes),
        "secondary_outcomes": list(trial.secondary_outcomes),
        "start_date": trial.start_date,
        "completion_date": trial.completion_date,
        "locations_count": trial.locations_count,
        "last_update": trial.last_update,
        "has_results": trial.has_results,
        "fetched_at": trial.fetched_at.isoformat(),
        "stale": stale,
    }


def summary_payload(summary: StudySummary) -> dict[str, Any]:
    """Return one search result as the API serves it."""
    return {
        "nct_id": summary.nct_id,
        "url": ctgov_url(summary.nct_id),
        "brief_title": summary.brief_title,
        "phases": list(summary.phases),
        "phase_label": phase_label(summary.phases),
        "overall_status": summary.overall_status,
        "status_label": status_label(summary.overall_status) if summary.overall_status else "",
        "study_type": summary.study_type,
        "lead_sponsor": summary.lead_sponsor,
        "enrollment": summary.enrollment,
        "conditions": list(summary.conditions),
        "interventions": list(summary.interventions),
        "start_date": summary.start_date,
        "completion_date": summary.completion_date,
    }
