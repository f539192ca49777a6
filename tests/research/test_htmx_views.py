"""The tray endpoints answer htmx (HX-Request) with the partials the research pages swap in."""

from __future__ import annotations

import lxml.html
import pytest

from research.models import AIColumnRun
from tests.research.conftest import MELANOMA_NCTS
from tests.research.factories import AIColumnFactory, AIColumnResultFactory
from tests.research.test_views import STATE, TRIAL_SEARCH, logged_in, suggestion_message  # noqa: F401

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def fragment(response) -> lxml.html.HtmlElement:
    """Parse an htmx partial (no <html>), wrapped so that out-of-band siblings stay in the tree."""
    body = response.content.decode()
    assert "<html" not in body
    return lxml.html.fragment_fromstring(body, create_parent="div")


def test_dismiss_answers_with_the_decided_card_and_an_announcement(logged_in, user) -> None:  # noqa: F811
    message = suggestion_message(user, ("trial_search_suggestion", TRIAL_SEARCH))

    response = logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p1/dismiss/", {"state": STATE}, **HX)

    assert response.status_code == 200
    assert "HX-Redirect" not in response
    html = fragment(response)
    card = html.cssselect("[data-payload-card]")[0]
    assert "state-dismissed" in card.get("class").split()
    assert card.cssselect("[data-payload-state]")[0].text_content() == "Dismissed"
    assert card.cssselect("form[data-payload-form]") == []
    status = html.cssselect("#tray-status")[0]
    assert (status.get("hx-swap-oob"), status.text_content()) == ("innerHTML", "Suggestion dismissed.")
    message.refresh_from_db()
    assert message.extras["payloads"][0]["state"] == "dismissed"


def test_accept_sends_the_browser_to_the_accepted_search(logged_in, user) -> None:  # noqa: F811
    message = suggestion_message(user, ("trial_search_suggestion", TRIAL_SEARCH))

    response = logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p1/accept/", {"state": STATE}, **HX)

    assert response.status_code == 200
    assert response["HX-Redirect"] == "/trialscout/?condition=melanoma&phase=PHASE3&status=RECRUITING"
    assert fragment(response).cssselect("[data-payload-state]")[0].text_content() == "Accepted"


def test_deciding_twice_shows_the_card_with_the_reason(logged_in, user) -> None:  # noqa: F811
    message = suggestion_message(user, ("trial_search_suggestion", TRIAL_SEARCH))
    logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p1/dismiss/", {"state": STATE}, **HX)

    response = logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p1/accept/", {"state": STATE}, **HX)

    assert response.status_code == 409
    card = fragment(response).cssselect("[data-payload-card]")[0]
    assert card.cssselect("[data-payload-state]")[0].text_content() == "Dismissed"
    error = card.cssselect(".payload-error")[0]
    assert error.get("role") == "alert"
    assert error.text_content() == "This suggestion was already dismissed; it cannot be decided again."


def test_an_unknown_suggestion_is_not_swapped_into_the_page(logged_in, user) -> None:  # noqa: F811
    message = suggestion_message(user, ("trial_search_suggestion", TRIAL_SEARCH))

    response = logged_in.post(f"/chat/research/messages/{message.pk}/payloads/p9/accept/", {"state": STATE}, **HX)

    assert response.status_code == 404
    assert "payload-card" not in response.content.decode()


def test_poll_answers_with_the_progress_and_the_settled_cells_out_of_band(logged_in, user) -> None:  # noqa: F811
    column = AIColumnFactory(user=user, name="Over 65")
    run = AIColumnRun.objects.create(
        column=column,
        item_ids=MELANOMA_NCTS,
        total=3,
        done=2,
        failed=1,
        status="running",
        errors=[{"item_id": MELANOMA_NCTS[1], "code": "invalid", "message": "the model did not answer"}],
    )
    AIColumnResultFactory(column=column, item_id=MELANOMA_NCTS[0], value="yes", justification="Adults of any age.")

    html = fragment(logged_in.get(f"/chat/research/runs/{run.pk}/", **HX))

    block = html.cssselect(".ai-progress")[0]
    assert block.get("hx-get") == f"/chat/research/runs/{run.pk}/"
    assert block.get("hx-trigger") == "every 500ms"
    assert block.cssselect("label")[0].text_content() == "Evaluating Over 65"
    assert block.cssselect("[data-ai-progress-text]")[0].text_content() == "2 of 3 rows, 1 failed"
    by_id = {cell.get("id"): cell for cell in html.cssselect("template td")}
    answered = by_id[f"ai-cell-{column.pk}-{MELANOMA_NCTS[0]}"]
    assert (answered.get("hx-swap-oob"), answered.get("data-ai-value")) == ("true", "yes")
    assert answered.get("title") == "Adults of any age."
    failed = by_id[f"ai-cell-{column.pk}-{MELANOMA_NCTS[1]}"]
    assert failed.text_content() == "Failed" and failed.get("title") == "the model did not answer"
    assert len(by_id) == 2


def test_a_finished_run_stops_the_poll(logged_in, user) -> None:  # noqa: F811
    column = AIColumnFactory(user=user, name="Over 65")
    run = AIColumnRun.objects.create(column=column, item_ids=MELANOMA_NCTS, total=3, done=3, status="succeeded")

    block = fragment(logged_in.get(f"/chat/research/runs/{run.pk}/", **HX)).cssselect(".ai-progress")[0]

    assert block.get("hx-get") is None and block.get("hx-trigger") is None
    assert "done" in block.get("class").split()
    assert block.cssselect("label")[0].text_content() == "Evaluated Over 65"
    assert block.cssselect("[data-ai-progress-text]")[0].text_content() == "Done: 3 of 3 rows."
