"""Admin for the trial cache: read-only records and a refresh action."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone
from pytest_httpserver import HTTPServer

from tests.trials.factories import TrialFactory
from trials.models import Trial

pytestmark = pytest.mark.django_db


def test_changelist_lists_cached_trials_in_a_bounded_number_of_queries(
    admin_client, django_assert_max_num_queries
) -> None:
    for nct_id in ("NCT00000001", "NCT00000002", "NCT00000003"):
        TrialFactory(nct_id=nct_id)

    with django_assert_max_num_queries(12):
        response = admin_client.get("/admin/trials/trial/")

    assert response.status_code == 200
    assert response.content.decode().count('href="/admin/trials/trial/') >= 3
    assert "NCT00000003" in response.content.decode()


def test_cached_trials_cannot_be_added_or_edited_by_hand(admin_client) -> None:
    trial = TrialFactory(nct_id="NCT00000001", brief_title="From the registry")

    assert admin_client.get("/admin/trials/trial/add/").status_code == 403
    admin_client.post(f"/admin/trials/trial/{trial.pk}/change/", {"brief_title": "Edited"})

    assert Trial.objects.get().brief_title == "From the registry"


def test_refresh_action_fetches_the_selected_trials_again(
    admin_client, ctgov: HTTPServer, recording: Callable[[str], bytes]
) -> None:
    stale = TrialFactory(nct_id="NCT06604689", brief_title="Old", fetched_at=timezone.now() - timedelta(days=1))
    missing = TrialFactory(nct_id="NCT99999999", brief_title="Gone")
    ctgov.expect_request("/api/v2/studies/NCT06604689").respond_with_data(
        recording("biomcp/get_nct06604689_20260811.json"), content_type="application/json"
    )
    ctgov.expect_request("/api/v2/studies/NCT99999999").respond_with_data("Not Found", status=404)

    response = admin_client.post(
        "/admin/trials/trial/",
        {"action": "refresh_from_ctgov", "_selected_action": [stale.pk, missing.pk]},
        follow=True,
    )

    messages = [str(message) for message in response.context["messages"]]
    assert messages == [
        "Refreshed 1 trial(s) from ClinicalTrials.gov.",
        "NCT99999999: ClinicalTrials.gov has no study NCT99999999; check the NCT number.",
    ]
    assert Trial.objects.get(nct_id="NCT06604689").brief_title.startswith("AI-guided Prognostication")
    assert Trial.objects.get(nct_id="NCT99999999").brief_title == "Gone"
