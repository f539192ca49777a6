"""Turn ClinicalTrials.gov v2 JSON into typed values.

Records are read defensively: a search asked with `fields=` carries only some modules, older
records lack whole sections, and any value may be missing or of an unexpected type. A missing
value becomes "" / None / [] — never an exception — except the NCT id, without which a record
cannot be used at all.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

from evidence.identifiers import is_nct
from trials.clients import CtgovInvalidResponse

logger = structlog.get_logger(__name__)

# A heading line of the eligibility text: unindented (an indented "Exclusion Criteria:" inside a
# list item is a registry data-entry slip, seen in NCT04280705), optionally bold/#-marked,
# optionally "Key ...", optionally qualified ("Inclusion criteria for parents:").
_HEADING = r"^(?:\*\*|#{{1,6}}[ \t]*)?(?:key[ \t]+)?(?:{words})[ \t]+criteria\b[^\n]{{0,60}}?:?(?:\*\*)?[ \t]*$"
_INCLUSION_HEADING = re.compile(_HEADING.format(words="inclusion|eligibility"), re.IGNORECASE | re.MULTILINE)
_EXCLUSION_HEADING = re.compile(_HEADING.format(words="exclusion"), re.IGNORECASE | re.MULTILINE)
# ClinicalTrials.gov "markup" fields are Markdown with backslash-escaped punctuation (`\>`, `\[`).
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|~=])")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [text for text in (_str(item) for item in _list(value)) if text]


def _int(value: Any) -> int | None:
    # bool is an int subclass; a boolean count is not a count.
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _date(status_module: dict[str, Any], key: str) -> str:
    return _str(_dict(status_module.get(key)).get("date"))


def unescape_markup(text: str) -> str:
    """Return ClinicalTrials.gov Markdown text with its backslash escapes removed (`\\>` → `>`)."""
    return _MARKDOWN_ESCAPE.sub(r"\1", text)


def split_eligibility(criteria: str) -> tuple[str, str]:
    """Return (inclusion, exclusion) text split at the "Inclusion/Exclusion Criteria:" headings.

    Text with neither heading is not guessed at: both parts are "" and callers show the whole
    criteria text instead.
    """
    inclusion = _INCLUSION_HEADING.search(criteria)
    exclusion = _EXCLUSION_HEADING.search(criteria, inclusion.end() if inclusion else 0)
    if inclusion and exclusion:
        return criteria[inclusion.end() : exclusion.start()].strip(), criteria[exclusion.end() :].strip()
    if inclusion:
        return criteria[inclusion.end() :].strip(), ""
    if exclusion:
        return criteria[: exclusion.start()].strip(), criteria[exclusion.end() :].strip()
    return "", ""


def _nct_id(study: dict[str, Any]) -> str:
    protocol = _dict(study.get("protocolSection"))
    nct_id = _str(_dict(protocol.get("identificationModule")).get("nctId"))
    if not is_nct(nct_id):
        raise CtgovInvalidResponse(
            f"ClinicalTrials.gov returned a study without a valid NCT id (got {nct_id or 'none'!r})."
        )
    return nct_id


def _interventions(module: dict[str, Any]) -> list[dict[str, str]]:
    interventions = []
    for item in _list(module.get("interventions")):
        item = _dict(item)
        name = _str(item.get("name"))
        if name:
            interventions.append({"type": _str(item.get("type")), "name": name})
    return interventions


def _outcomes(value: Any) -> list[dict[str, str]]:
    outcomes = []
    for item in _list(value):
        item = _dict(item)
        measure = _str(item.get("measure"))
        if measure:
            outcomes.append(
                {
                    "measure": measure,
                    "description": _str(item.get("description")),
                    "time_frame": _str(item.get("timeFrame")),
                }
            )
    return outcomes


@dataclass(frozen=True)
class StudySummary:
    """One row of a search result."""

    nct_id: str
    brief_title: str
    overall_status: str
    phases: list[str]
    study_type: str
    lead_sponsor: str
    enrollment: int | None
    conditions: list[str]
    interventions: list[dict[str, str]]
    start_date: str
    completion_date: str


@dataclass(frozen=True)
class StudyPage:
    """One page of `GET studies`: `total_count` only on a first page asked with countTotal."""

    studies: list[StudySummary]
    next_page_token: str | None
    total_count: int | None


@dataclass(frozen=True)
class ParsedTrial:
    """Everything MedCite keeps of one study record; field names match `trials.models.Trial`."""

    nct_id: str
    nct_id_aliases: list[str] = field(default_factory=list)
    brief_title: str = ""
    official_title: str = ""
    brief_summary: str = ""
    study_type: str = ""
    phases: list[str] = field(default_factory=list)
    overall_status: str = ""
    lead_sponsor: str = ""
    enrollment: int | None = None
    enrollment_type: str = ""
    conditions: list[str] = field(default_factory=list)
    interventions: list[dict[str, str]] = field(default_factory=list)
    eligibility_criteria: str = ""
    inclusion_criteria: str = ""
    exclusion_criteria: str = ""
    minimum_age: str = ""
    maximum_age: str = ""
    sex: str = ""
    healthy_volunteers: bool | None = None
    primary_outcomes: list[dict[str, str]] = field(default_factory=list)
    secondary_outcomes: list[dict[str, str]] = field(default_factory=list)
    start_date: str = ""
    completion_date: str = ""
    locations_count: int | None = None
    last_update: str = ""
    has_results: bool = False

    def model_fields(self) -> dict[str, Any]:
        """Return the values to store on a `Trial`, NCT id excluded."""
        values = asdict(self)
        del values["nct_id"]
        return values


def parse_study(study: dict[str, Any]) -> ParsedTrial:
    """Parse one v2 study record (a `GET studies/{nctId}` body or an item of `studies`)."""
    nct_id = _nct_id(study)
    protocol = _dict(study.get("protocolSection"))
    identification = _dict(protocol.get("identificationModule"))
    status = _dict(protocol.get("statusModule"))
    design = _dict(protocol.get("designModule"))
    enrollment = _dict(design.get("enrollmentInfo"))
    eligibility = _dict(protocol.get("eligibilityModule"))
    criteria = _str(eligibility.get("eligibilityCriteria"))
    inclusion, exclusion = split_eligibility(criteria)
    outcomes = _dict(protocol.get("outcomesModule"))
    locations = protocol.get("contactsLocationsModule")
    healthy = eligibility.get("healthyVolunteers")
    return ParsedTrial(
        nct_id=nct_id,
        nct_id_aliases=[alias for alias in _strings(identification.get("nctIdAliases")) if is_nct(alias)],
        brief_title=_str(identification.get("briefTitle")),
        official_title=_str(identification.get("officialTitle")),
        brief_summary=_str(_dict(protocol.get("descriptionModule")).get("briefSummary")),
        study_type=_str(design.get("studyType")),
        phases=_strings(design.get("phases")),
        overall_status=_str(status.get("overallStatus")),
        lead_sponsor=_str(_dict(_dict(protocol.get("sponsorCollaboratorsModule")).get("leadSponsor")).get("name")),
        enrollment=_int(enrollment.get("count")),
        enrollment_type=_str(enrollment.get("type")),
        conditions=_strings(_dict(protocol.get("conditionsModule")).get("conditions")),
        interventions=_interventions(_dict(protocol.get("armsInterventionsModule"))),
        eligibility_criteria=criteria,
        inclusion_criteria=inclusion,
        exclusion_criteria=exclusion,
        minimum_age=_str(eligibility.get("minimumAge")),
        maximum_age=_str(eligibility.get("maximumAge")),
        sex=_str(eligibility.get("sex")),
        healthy_volunteers=healthy if isinstance(healthy, bool) else None,
        primary_outcomes=_outcomes(outcomes.get("primaryOutcomes")),
        secondary_outcomes=_outcomes(outcomes.get("secondaryOutcomes")),
        start_date=_date(status, "startDateStruct"),
        completion_date=_date(status, "completionDateStruct"),
        # No contactsLocationsModule (e.g. a record fetched with fields=) means "not reported".
        locations_count=len(_list(locations.get("locations"))) if isinstance(locations, dict) else None,
        last_update=_date(status, "lastUpdatePostDateStruct"),
        has_results=study.get("hasResults") is True,
    )


def parse_summary(study: dict[str, Any]) -> StudySummary:
    """Parse one item of a search page's `studies` into a results-table row."""
    trial = parse_study(study)
    return StudySummary(
        nct_id=trial.nct_id,
        brief_title=trial.brief_title,
        overall_status=trial.overall_status,
        phases=trial.phases,
        study_type=trial.study_type,
        lead_sponsor=trial.lead_sponsor,
        enrollment=trial.enrollment,
        conditions=trial.conditions,
        interventions=trial.interventions,
        start_date=trial.start_date,
        completion_date=trial.completion_date,
    )


def parse_search_page(body: dict[str, Any]) -> StudyPage:
    """Parse a `GET studies` body; studies without a usable NCT id are skipped and logged."""
    studies = []
    for item in _list(body.get("studies")):
        try:
            studies.append(parse_summary(_dict(item)))
        except CtgovInvalidResponse as exc:
            logger.warning("ctgov.study_skipped", reason=str(exc))
    token = _str(body.get("nextPageToken"))
    return StudyPage(studies=studies, next_page_token=token or None, total_count=_int(body.get("totalCount")))
