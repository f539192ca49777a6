"""Each error under /api/ is the JSON envelope with DJANGO_DEBUG on and off; no JSON body nests deep enough to crash."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import Http404
from django.test import Client, RequestFactory, override_settings

from chat.models import Conversation
from config.media import media_serve
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

DEBUG_MODES = [pytest.param(False, id="DEBUG=0"), pytest.param(True, id="DEBUG=1")]
DEEP = "[" * 100_000
NESTING_MESSAGE = "nested deeper than 64 levels"


@pytest.fixture(params=DEBUG_MODES)
def debug(request: pytest.FixtureRequest) -> Any:
    with override_settings(DEBUG=request.param):
        yield request.param


@pytest.fixture
def curator(client: Client) -> Client:
    client.force_login(UserFactory(username="dr-curator", is_staff=True, groups=["curator"]))
    return client


def _envelope(response: Any) -> dict[str, str]:
    assert response["Content-Type"] == "application/json", response.content[:300]
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) >= {"code", "message"}, body
    return body["error"]


def test_an_unknown_research_page_is_a_json_404(curator: Client, debug: bool) -> None:
    question = json.dumps({"question": "Is apixaban safe in dialysis?"})
    response = curator.post("/api/v1/research/x/ask/", question, content_type="application/json")
    assert response.status_code == 404
    assert _envelope(response)["code"] == "not_found"


def test_an_unknown_api_path_is_a_json_404_in_both_modes(client: Client, debug: bool) -> None:
    response = client.get("/api/v1/nothing-here/", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert _envelope(response) == {
        "code": "not_found", "message": "No API endpoint at /api/v1/nothing-here/; see /api/docs/."
    }


def test_a_post_without_the_trailing_slash_says_where_to_send_it(curator: Client, debug: bool) -> None:
    response = curator.post("/api/v1/conversations", json.dumps({"title": "x"}), content_type="application/json")
    assert response.status_code == 404
    assert _envelope(response) == {
        "code": "not_found",
        "message": "No API endpoint at /api/v1/conversations; API URLs end with a slash: "
        "POST to /api/v1/conversations/ instead.",
    }
    assert Conversation.objects.count() == 0


def test_a_body_over_the_upload_limit_is_a_json_400_in_both_modes(curator: Client, debug: bool) -> None:
    body = json.dumps({"title": "x" * 3_000_000})
    response = curator.post("/api/v1/conversations/", body, content_type="application/json")
    assert response.status_code == 400
    assert _envelope(response) == {
        "code": "request_too_large",
        "message": "The request body is larger than the 2,621,440-byte limit (DATA_UPLOAD_MAX_MEMORY_SIZE); "
        "send less data per request.",
    }
    assert Conversation.objects.count() == 0


def test_a_browsable_api_error_page_is_json_too(curator: Client, debug: bool) -> None:
    response = curator.get("/api/v1/conversations/999999/", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert _envelope(response)["code"] == "not_found"


JSON_POSTS = [
    "/api/v1/studies/",
    "/api/v1/ingestions/",
    "/api/v1/conversations/",
    "/api/v1/conversations/{conversation}/messages/",
    "/api/v1/scout/",
    "/api/v1/research/tablizer/ask/",
    "/api/v1/research/tablizer/columns/",
    "/api/v1/research/snapshots/",
]


NESTED_BODIES = [
    pytest.param(DEEP, id="[ x 100,000"),
    pytest.param('{"a": ' * 100_000, id="{ x 100,000"),
    pytest.param("[" * 65 + "]" * 65, id="65 levels, well formed"),
]


@pytest.mark.parametrize("body", NESTED_BODIES)
@pytest.mark.parametrize("url", JSON_POSTS)
def test_deeply_nested_json_is_a_400_on_every_json_post(curator: Client, debug: bool, url: str, body: str) -> None:
    user = UserFactory._meta.model.objects.get(username="dr-curator")
    conversation = Conversation.objects.create(user=user, title="Mine")
    response = curator.post(url.format(conversation=conversation.pk), body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    error = _envelope(response)
    assert error["code"] == "parse_error"
    assert NESTING_MESSAGE in error["message"]
    assert Conversation.objects.count() == 1


def test_sixty_four_levels_are_still_read(curator: Client, debug: bool) -> None:
    title = json.loads("[" * 63 + '"deep"' + "]" * 63)
    response = curator.post("/api/v1/conversations/", json.dumps({"title": title}), content_type="application/json")
    # Read (64 levels with the outer object), then refused by the serializer for what it is: not a title.
    assert response.status_code == 400
    assert NESTING_MESSAGE not in _envelope(response)["message"]


def test_a_media_name_too_long_for_the_file_system_is_a_404(settings: Any, tmp_path: Any) -> None:
    # The media URL exists only when urls.py loads with DJANGO_DEBUG=1, so the view is called as routed there.
    settings.MEDIA_ROOT = tmp_path
    (tmp_path / "aid.png").write_bytes(b"png")
    request = RequestFactory().get("/media/aid.png")
    assert media_serve(request, "aid.png").status_code == 200
    with pytest.raises(Http404, match="No media file 'AAAA"):
        media_serve(RequestFactory().get("/media/" + "A" * 300), "A" * 300)  # ENAMETOOLONG, once a 500
