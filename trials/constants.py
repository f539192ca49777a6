"""ClinicalTrials.gov v2 enum values MedCite searches by, with the labels people read."""

from __future__ import annotations

from evidence.text import roman_value

# designModule.phases values, in the order a clinician reads them.
PHASES: dict[str, str] = {
    "EARLY_PHASE1": "Early phase 1",
    "PHASE1": "Phase 1",
    "PHASE2": "Phase 2",
    "PHASE3": "Phase 3",
    "PHASE4": "Phase 4",
    "NA": "Not applicable",
}

# statusModule.overallStatus values. TrialScout offers the first seven; the API and the client
# accept every value the registry uses.
SEARCHABLE_STATUSES: dict[str, str] = {
    "RECRUITING": "Recruiting",
    "ACTIVE_NOT_RECRUITING": "Active, not recruiting",
    "COMPLETED": "Completed",
    "NOT_YET_RECRUITING": "Not yet recruiting",
    "TERMINATED": "Terminated",
    "WITHDRAWN": "Withdrawn",
    "SUSPENDED": "Suspended",
}
STATUSES: dict[str, str] = {
    **SEARCHABLE_STATUSES,
    "ENROLLING_BY_INVITATION": "Enrolling by invitation",
    "UNKNOWN": "Unknown status",
    "WITHHELD": "Withheld",
    "AVAILABLE": "Available (expanded access)",
    "NO_LONGER_AVAILABLE": "No longer available",
    "TEMPORARILY_NOT_AVAILABLE": "Temporarily not available",
    "APPROVED_FOR_MARKETING": "Approved for marketing",
}

# What a user picks → the v2 `sort` value (only date and numeric fields may be sorted on).
SORTS: dict[str, tuple[str, str]] = {
    "relevance": ("@relevance", "Best match"),
    "last_update": ("LastUpdatePostDate:desc", "Recently updated"),
    "start_date": ("StartDate:desc", "Newest start date"),
    "enrollment": ("EnrollmentCount:desc", "Largest enrollment"),
}

SEX_LABELS: dict[str, str] = {"ALL": "All", "FEMALE": "Female", "MALE": "Male"}


def phase_label(phases: list[str] | tuple[str, ...]) -> str:
    """Return "Phase 1/Phase 2" for ["PHASE1", "PHASE2"], "" for no phases."""
    return "/".join(PHASES.get(phase, phase) for phase in phases)


def status_label(status: str) -> str:
    """Return the human label of an overallStatus value, or the value itself if unknown."""
    return STATUSES.get(status, status.replace("_", " ").capitalize())


# nextPageToken values are opaque base64url-like strings ("ZVt07cGHkvI2wRk2CJf6_LLq14bE…").
PAGE_TOKEN_PATTERN = r"^[A-Za-z0-9_\-=+/.~]{1,512}$"
PAGE_TOKEN_MESSAGE = "page_token must be the next_page_token of a previous search, unchanged."
NO_CRITERIA_MESSAGE = "Give at least one of condition, intervention, sponsor, q, phase or status."


def phase_code(number: str, *, early: bool = False) -> str | None:
    """Return the ClinicalTrials.gov phase for a phase number written as a digit or a Roman numeral ("3", "III",
    "iii": "PHASE3"; early "1": "EARLY_PHASE1"), or None when there is no such phase. Only phase 1 has an early
    form, so "early phase 2" is phase 2."""
    value = roman_value(number)
    digit = str(value) if value is not None else number
    code = f"EARLY_PHASE{digit}" if early and digit == "1" else f"PHASE{digit}"
    return code if code in PHASES else None
