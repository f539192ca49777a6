"""Who may spend the NCBI and ClinicalTrials.gov budgets, and how failed log-ins are throttled."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client
from pytest_httpserver import HTTPServer
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory
from tests.pubmed.conftest import FakeEutils, efetch_files, eutils_dir, fake_eutils, recorded_articles  # noqa: F401
from tests.trials.conftest import _ctgov_server, ctgov  # noqa: F401

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


@pytest.mark.parametrize(
    "url",
    ["/tablizer/?q=melanoma", "/tablizer/abstracts/22663011/", "/trialscout/?condition=melanoma",
     "/trialscout/NCT04114136/"],
)
def test_anonymous_visitors_cannot_make_pages_call_pubmed_or_ctgov(
    client: Client, fake_eutils: FakeEutils, ctgov: HTTPServer, url: str  # noqa: F811
) -> None:
    fake_eutils.serve()
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert fake_eutils.seen == []
    assert ctgov.log == []


def test_signed_in_users_search_pubmed_from_the_tablizer(client: Client, fake_eutils: FakeEutils) -> None:  # noqa: F811
    fake_eutils.esearch_ids = {"melanoma": ["22663011"]}
    fake_eutils.serve()
    client.force_login(UserFactory(username="researcher"))
    assert client.get("/tablizer/", {"q": "melanoma"}).status_code == 200
    assert [seen.path for seen in fake_eutils.seen] == ["/esearch.fcgi", "/efetch.fcgi"]


def test_the_library_stays_open_to_anonymous_readers(client: Client) -> None:
    assert client.get("/library/").status_code == 200


def _log_in(client: Client, username: str, password: str, *, address: str = "10.0.0.1", path: str = "/accounts/login/"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_the_login_page_exists_and_a_right_password_signs_in(client: Client) -> None:
    UserFactory(username="demo")
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert 'name="username"' in page.content.decode() and 'name="password"' in page.content.decode()
    response = _log_in(client, "demo", PASSWORD)
    assert (response.status_code, response["Location"]) == (302, "/chat/")


def test_fifteen_wrong_passwords_in_a_few_seconds_are_locked_out_from_the_fifth(client: Client) -> None:
    UserFactory(username="dr-ada")
    # Sent back to back, as a password-guessing script does (the issue saw 15 in 6 s, all answered 200).
    statuses = [_log_in(client, "dr-ada", f"wrong-{n}").status_code for n in range(15)]
    # The fifth failure reaches LOGIN_FAILURE_LIMIT (5) and is answered with the lockout page.
    assert statuses == [200] * 4 + [429] * 11
    locked = _log_in(client, "dr-ada", PASSWORD)
    assert locked.status_code == 429  # even the right password waits for the cool-off
    assert "Too many log-in attempts" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_attackers_failures_from_elsewhere_do_not_lock_the_owner_out(client: Client) -> None:
    UserFactory(username="dr-ada")
    # The attack: five wrong passwords for dr-ada from the attacker's address...
    statuses = [_log_in(client, "dr-ada", "wrong", address="203.0.113.9").status_code for _ in range(7)]
    assert statuses == [200] * 4 + [429] * 3  # ...lock the attacker's pair
    assert _log_in(client, "dr-ada", PASSWORD, address="203.0.113.9").status_code == 429
    # ...and not dr-ada, at her own address, even though she has never signed in from it before.
    assert _log_in(client, "dr-ada", PASSWORD, address="10.0.0.1").status_code == 302


def test_colleagues_behind_one_address_each_still_log_in_after_a_few_mistype(client: Client) -> None:
    clinic = "198.51.100.7"  # one NAT address for the whole clinic
    for n in range(12):
        UserFactory(username=f"nurse-{n}")
    for n in range(8):  # eight colleagues mistype, three or four times each: 28 failures from one address
        for _ in range(3 + n % 2):
            assert _log_in(client, f"nurse-{n}", "wrong", address=clinic).status_code == 200
    for n in range(12):
        client.logout()
        assert _log_in(client, f"nurse-{n}", PASSWORD, address=clinic).status_code == 302, n


def test_an_address_past_its_ceiling_is_locked_for_every_username(client: Client, settings) -> None:
    settings.LOGIN_ADDRESS_FAILURE_LIMIT = 12
    UserFactory(username="dr-grace")
    statuses = [_log_in(client, f"guess-{n}", "wrong", address="10.0.3.3").status_code for n in range(14)]
    assert statuses == [200] * 11 + [429] * 3
    locked = _log_in(client, "dr-grace", PASSWORD, address="10.0.3.3")
    assert locked.status_code == 429
    assert "too many failed log-ins from this network address" in locked.content.decode()
    assert _log_in(client, "dr-grace", PASSWORD, address="10.0.3.4").status_code == 302


def test_a_username_attacked_from_many_addresses_is_slowed_not_locked(client: Client) -> None:
    UserFactory(username="dr-ada")
    assert _log_in(client, "dr-ada", PASSWORD, address="10.0.0.1").status_code == 302  # her usual address
    client.logout()
    # Failures spread over five addresses, two each: no pair reaches its limit; the tenth slows the username.
    statuses = [_log_in(client, "dr-ada", "wrong", address=f"203.0.113.{n // 2}").status_code for n in range(10)]
    assert statuses == [200] * 9 + [429]
    assert AccessAttempt.objects.filter(username="dr-ada").count() == 5
    slowed = _log_in(client, "dr-ada", "wrong", address="203.0.113.77")
    assert slowed.status_code == 429
    assert "accepts one attempt every few seconds. Wait" in slowed.content.decode()
    # Refused unchecked (and uncounted) until the pause ends, the right password included...
    assert _log_in(client, "dr-ada", PASSWORD, address="203.0.113.78").status_code == 429
    # ...while dr-ada, from an address she has signed in from, is not slowed at all.
    assert _log_in(client, "dr-ada", PASSWORD, address="10.0.0.1").status_code == 302
    client.logout()
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=31))
    assert _log_in(client, "dr-ada", PASSWORD, address="203.0.113.78").status_code == 302


def test_api_tokens_and_sessions_keep_working_for_a_locked_pair(client: Client) -> None:
    user = UserFactory(username="dr-ada")
    token = Token.objects.create(user=user)
    signed_in = Client()
    assert _log_in(signed_in, "dr-ada", PASSWORD, address="10.0.0.1").status_code == 302
    for _ in range(5):
        _log_in(client, "dr-ada", "wrong", address="10.0.0.1")
    assert _log_in(client, "dr-ada", PASSWORD, address="10.0.0.1").status_code == 429  # the password is locked
    by_token = client.get("/api/v1/conversations/", HTTP_AUTHORIZATION=f"Token {token.key}", REMOTE_ADDR="10.0.0.1")
    assert by_token.status_code == 200
    assert signed_in.get("/api/v1/conversations/", REMOTE_ADDR="10.0.0.1").status_code == 200


def test_the_admin_login_is_throttled_too(client: Client) -> None:
    UserFactory(username="curator", is_staff=True)
    statuses = [
        _log_in(client, "curator", "wrong", path="/admin/login/?next=/admin/").status_code for _ in range(6)
    ]
    assert statuses == [200] * 4 + [429] * 2


def test_a_success_clears_the_count_of_earlier_failures(client: Client) -> None:
    UserFactory(username="dr-ada")
    for _ in range(4):
        assert _log_in(client, "dr-ada", "wrong").status_code == 200
    assert _log_in(client, "dr-ada", PASSWORD).status_code == 302
    client.logout()
    statuses = [_log_in(client, "dr-ada", "wrong").status_code for _ in range(5)]
    assert statuses == [200] * 4 + [429]  # counted from zero again


def test_a_username_longer_than_any_account_is_counted_not_a_server_error(client: Client) -> None:
    """Found by the fuzz test: axes stored the attempted username in a 255-character column (HTTP 500)."""
    response = client.post("/accounts/login/", {"username": "x" * 1000, "password": "wrong"})
    assert response.status_code == 200  # the form again, with its error
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == ["x" * 150]
