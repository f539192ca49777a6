"""get_trial (cache + TTL + text/payload), trial_store and trial_search against the fake server."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from pytest_httpserver import HTTPServer

from tests.trials.factories import TrialFactory
from trials.clients import SEARCH_FIELDS, CtgovInvalidResponse, CtgovNotFound, CtgovUnavailable, InvalidNctId
from trials.models import Trial
from trials.parsers import ParsedTrial
from trials.rendering import TEXT_CRITERIA_MAX_CHARS
from trials.services import get_trial, trial_search, trial_store

pytestmark = pytest.mark.django_db

JSON = "application/json"
NCT06604689_TITLE = (
    "AI-guided Prognostication and Cranial Radiotherapy Optimization in EGFR-TKI-treated Non-small Cell "
    "Lung Cancer Patients With Baseline Brain Metastases"
)


def serve_study(server: HTTPServer, recording: Callable[[str], bytes], nct_id: str, name: str) -> None:
    server.expect_request(f"/api/v2/studies/{nct_id}").respond_with_data(recording(name), content_type=JSON)


def test_get_trial_fetches_stores_and_renders_a_full_record(
    ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    serve_study(ctgov, recording, "NCT02210780", "aact/study_NCT02210780.json")

    details = get_trial(nct_id="NCT02210780")

    assert (details.from_cache, details.stale) == (False, False)
    stored = Trial.objects.get()
    assert stored.pk == details.trial.pk
    assert (stored.nct_id, stored.overall_status, stored.phases, stored.lead_sponsor) == (
        "NCT02210780",
        "COMPLETED",
        ["PHASE2"],
        "Regeneron Pharmaceuticals",
    )
    assert (stored.enrollment, stored.enrollment_type, stored.locations_count) == (194, "ACTUAL", 42)
    assert (stored.minimum_age, stored.maximum_age, stored.sex, stored.healthy_volunteers) == (
        "18 Years",
        "64 Years",
        "ALL",
        False,
    )
    assert len(stored.secondary_outcomes) == 10
    assert stored.inclusion_criteria.startswith("1. Male or female adults ages 18 to 64 years with Chronic AD")
    assert timezone.now() - stored.fetched_at < timedelta(seconds=30)
    assert (
        "Primary outcomes:\n1. Percentage of Participants With a Positive Response (≥4-Fold Increase) to Tetanus "
        "Toxoid (the Adacel [Tdap] Vaccine) at Week 16 (time frame: Week 16)"
    ) in details.text
    # Markdown escapes in the registry text are removed for the model: `\[Eichenfeld 2004\]`.
    assert "Consensus Criteria, [Eichenfeld 2004])" in details.text
    assert len(ctgov.log) == 1


def test_get_trial_text_has_title_phase_status_sponsor_enrollment_eligibility_outcomes(
    ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    serve_study(ctgov, recording, "NCT06604689", "biomcp/get_nct06604689_20260811.json")

    text = get_trial(nct_id="NCT06604689").text

    head, _, criteria = text.partition("Inclusion criteria:\n")
    assert head == (
        f"ClinicalTrials.gov NCT06604689: {NCT06604689_TITLE}\n"
        "URL: https://clinicaltrials.gov/study/NCT06604689\n"
        "Phase: not reported\n"
        "Status: Recruiting\n"
        "Study type: Observational\n"
        "Lead sponsor: Fudan University\n"
        "Enrollment: 800 participants\n"
        "Conditions: NSCLC (Advanced Non-small Cell Lung Cancer); Brain Metastasases\n"
        "Interventions: third-generation EGFR TKIs (Almonertinib/Furmonertinib/Osimertinib)\n"
        "Start date: 2024-09-30; completion date: 2025-10-01\n"
        "Eligibility: sex All; ages 18 Years and older; healthy volunteers not reported\n"
    )
    inclusion, _, rest = criteria.partition("\nExclusion criteria:\n")
    assert inclusion.startswith("* Pathologically confirmed non-small cell lung cancer;\n* clinical stage IV")
    assert inclusion.endswith("* informed consent of the patient.")
    exclusion, _, outcomes = rest.partition("\nPrimary outcomes:\n")
    assert exclusion.startswith("* Multiple primary or metastatic tumors")
    assert exclusion.endswith("affect patient compliance.")
    assert outcomes == "not reported"


def test_get_trial_payload_is_the_trial_details_payload(ctgov: HTTPServer, recording: Callable[[str], bytes]) -> None:
    serve_study(ctgov, recording, "NCT06604689", "biomcp/get_nct06604689_20260811.json")

    details = get_trial(nct_id="nct06604689")

    payload = dict(details.payload)
    eligibility = payload.pop("eligibility")
    assert payload == {
        "type": "trial_details",
        "nct_id": "NCT06604689",
        "url": "https://clinicaltrials.gov/study/NCT06604689",
        "brief_title": NCT06604689_TITLE,
        "official_title": "",
        "brief_summary": details.trial.brief_summary,
        "study_type": "OBSERVATIONAL",
        "phases": [],
        "phase_label": "",
        "overall_status": "RECRUITING",
        "status_label": "Recruiting",
        "lead_sponsor": "Fudan University",
        "enrollment": 800,
        "enrollment_type": "",
        "conditions": ["NSCLC (Advanced Non-small Cell Lung Cancer)", "Brain Metastasases"],
        "interventions": [{"type": "", "name": "third-generation EGFR TKIs (Almonertinib/Furmonertinib/Osimertinib)"}],
        "primary_outcomes": [],
        "secondary_outcomes": [],
        "start_date": "2024-09-30",
        "completion_date": "2025-10-01",
        "locations_count": None,
        "last_update": "",
        "has_results": False,
        "fetched_at": details.trial.fetched_at.isoformat(),
        "stale": False,
    }
    assert payload["brief_summary"].startswith("The goal of this observational study is to extract")
    assert (eligibility["minimum_age"], eligibility["maximum_age"], eligibility["sex"]) == ("18 Years", "", "ALL")
    assert eligibility["healthy_volunteers"] is None
    assert eligibility["criteria"] == details.trial.eligibility_criteria
    assert eligibility["inclusion"].startswith("* Pathologically confirmed")
    assert eligibility["exclusion"].startswith("* Multiple primary or metastatic tumors")


def test_fresh_cached_trial_is_served_without_a_request(ctgov: HTTPServer, django_assert_num_queries) -> None:
    TrialFactory(nct_id="NCT02210780", brief_title="Cached title", fetched_at=timezone.now() - timedelta(hours=1))

    with django_assert_num_queries(1):
        details = get_trial(nct_id="NCT02210780")

    assert (details.from_cache, details.stale, details.trial.brief_title) == (True, False, "Cached title")
    assert ctgov.log == []


def test_stale_cached_trial_is_fetched_again_and_updated(
    ctgov: HTTPServer, recording: Callable[[str], bytes], settings
) -> None:
    settings.CTGOV_CACHE_TTL_SECONDS = 3600
    stale_at = timezone.now() - timedelta(seconds=3601)
    TrialFactory(nct_id="NCT02210780", brief_title="Old title", overall_status="RECRUITING", fetched_at=stale_at)
    serve_study(ctgov, recording, "NCT02210780", "aact/study_NCT02210780.json")

    details = get_trial(nct_id="NCT02210780")

    assert (details.from_cache, details.stale) == (False, False)
    stored = Trial.objects.get()
    assert stored.brief_title.startswith("Study of Dupilumab and Immune Responses in Adults With Atopic Dermatitis")
    assert stored.overall_status == "COMPLETED"
    assert stored.fetched_at > stale_at + timedelta(seconds=3600)
    assert len(ctgov.log) == 1


def test_ttl_of_zero_fetches_every_time(ctgov: HTTPServer, recording: Callable[[str], bytes], settings) -> None:
    settings.CTGOV_CACHE_TTL_SECONDS = 0
    serve_study(ctgov, recording, "NCT06604689", "biomcp/get_nct06604689_20260811.json")

    get_trial(nct_id="NCT06604689")
    get_trial(nct_id="NCT06604689")

    assert len(ctgov.log) == 2
    assert Trial.objects.count() == 1


def test_stale_copy_is_served_when_ctgov_is_unavailable(ctgov: HTTPServer, settings) -> None:
    settings.CTGOV_CACHE_TTL_SECONDS = 60
    fetched_at = timezone.now() - timedelta(days=30)
    TrialFactory(nct_id="NCT06604689", brief_title="Kept title", fetched_at=fetched_at)
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data("", status=503)

    details = get_trial(nct_id="NCT06604689")

    assert (details.from_cache, details.stale, details.payload["stale"]) == (True, True, True)
    assert details.text.endswith(
        f"Note: cached copy fetched {fetched_at:%Y-%m-%d}; ClinicalTrials.gov could not be reached."
    )
    assert len(ctgov.log) == 3  # CTGOV_MAX_RETRIES=2 in these tests
    assert Trial.objects.get().fetched_at == fetched_at


def test_unavailable_without_a_cached_copy_raises(ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data("", status=503)

    with pytest.raises(CtgovUnavailable) as caught:
        get_trial(nct_id="NCT06604689")

    assert str(caught.value) == "ClinicalTrials.gov is failing (HTTP 503) (3 attempts); try again in a few minutes."
    assert Trial.objects.count() == 0


def test_not_found_stores_nothing(ctgov: HTTPServer) -> None:
    ctgov.expect_request("/api/v2/studies/NCT99999999").respond_with_data("Not Found", status=404)

    with pytest.raises(CtgovNotFound):
        get_trial(nct_id="NCT99999999")

    assert Trial.objects.count() == 0


@pytest.mark.parametrize("nct_id", ["NCT1234", "PMID 12345678", "NCT 02210780", "nct0221078O"])
def test_invalid_nct_id_raises_before_any_request_or_query(
    ctgov: HTTPServer, nct_id: str, django_assert_num_queries
) -> None:
    with django_assert_num_queries(0), pytest.raises(InvalidNctId) as caught:
        get_trial(nct_id=nct_id)

    assert str(caught.value) == (
        f"{nct_id!r} is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951."
    )
    assert ctgov.log == []


def test_former_nct_number_finds_the_cached_trial(ctgov: HTTPServer) -> None:
    TrialFactory(nct_id="NCT02210780", nct_id_aliases=["NCT01000001"], brief_title="Aliased")

    details = get_trial(nct_id="NCT01000001")

    assert (details.trial.nct_id, details.trial.brief_title) == ("NCT02210780", "Aliased")
    assert ctgov.log == []


def test_long_criteria_are_truncated_in_the_text_with_a_pointer_to_the_full_record() -> None:
    trial = TrialFactory(nct_id="NCT02210780", inclusion_criteria="* " + "a" * 4000, exclusion_criteria="* b")

    text = get_trial(nct_id="NCT02210780").text

    inclusion = text.split("Inclusion criteria:\n")[1].split("\nExclusion criteria:")[0]
    assert inclusion == ("* " + "a" * (TEXT_CRITERIA_MAX_CHARS - 2) + f"\n[… truncated; full criteria at {trial.url}]")


def test_record_that_cannot_be_stored_stores_nothing() -> None:
    parsed = ParsedTrial(nct_id="NCT02210780", brief_title="x", phases=["PHASE2_AND_A_HALF_OF_SOMETHING"])

    with pytest.raises(CtgovInvalidResponse) as caught:
        trial_store(parsed=parsed)

    assert str(caught.value) == (
        "ClinicalTrials.gov returned a record for NCT02210780 that cannot be stored: "
        "phases: Item 1 in the array did not validate: Ensure this value has at most 16 characters (it has 30)."
    )
    assert Trial.objects.count() == 0


def test_trial_search_maps_sort_and_returns_the_parsed_page(
    ctgov: HTTPServer, recording: Callable[[str], bytes], settings
) -> None:
    settings.CTGOV_PAGE_SIZE = 3
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_melanoma_recruiting_limit3_20260811.json"), content_type=JSON
    )

    page = trial_search(condition="melanoma", statuses=["RECRUITING"], sort="last_update")

    assert [study.nct_id for study in page.studies] == ["NCT06970236", "NCT04114136", "NCT04318717"]
    assert (page.total_count, page.next_page_token) == (480, "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4ZmTmRvvE")
    assert [request.args.to_dict() for request, _ in ctgov.log] == [
        {
            "format": "json",
            "pageSize": "3",
            "query.cond": "melanoma",
            "filter.overallStatus": "RECRUITING",
            "sort": "LastUpdatePostDate:desc",
            "fields": ",".join(SEARCH_FIELDS),
            "countTotal": "true",
        }
    ]
    assert Trial.objects.count() == 0, "search rows are partial records and are not cached"


def test_trial_search_refuses_an_unknown_sort(ctgov: HTTPServer) -> None:
    with pytest.raises(ValueError, match="Unknown sort 'newest'"):
        trial_search(condition="melanoma", sort="newest")
    assert ctgov.log == []
