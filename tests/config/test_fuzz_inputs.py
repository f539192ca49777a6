"""Generated values in every query parameter, form field and path segment of every URL: never a 5xx.

Each URL pattern (the admin aside: `test_admin_permissions.py` walks it) is listed below with the
parameters its view reads. Hypothesis sends generated values - NUL bytes, Unicode digits, huge
numbers, long strings, lists where text is expected, JSON nested 100,000 deep as a body or a field - as a
signed-in curator or anonymously, with DJANGO_DEBUG on and off (DEBUG's technical pages must never answer
under /api/), with PubMed,
ClinicalTrials.gov answered by fake servers replaying recordings and the language model on a closed
port. Every answer must be below 500, a refusal under /api/ must be the JSON error envelope, and a
refused request (4xx) must leave every table of MedCite's own apps as it was.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest
from django.apps import apps
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chat.models import Conversation, ConversationApp, Message, MessageRole
from research.models import AIColumnRun, ScoutRun, ScoutRunStatus
from tests.chat.conftest import _eutils_server, esearch_for, eutils, eutils_recording  # noqa: F401
from tests.evidence.factories import StudyFactory
from tests.factories import UserFactory
from tests.research.factories import AIColumnFactory
from tests.trials.conftest import _ctgov_server, ctgov, ctgov_dir, recording  # noqa: F401

pytestmark = pytest.mark.django_db

OWN_APPS = ("evidence", "pubmed", "trials", "chat", "research")

# Values that broke or could break parsing: NUL, Unicode digits, out-of-range numbers, markup, whitespace.
NASTY = [
    "\x00", "a\x00b", "²", "²²²²", "٣٣", "1²", "\U0001d7d9\U0001d7da", "-1", "0", "99999999999999999999999",
    "1e3", "NaN",
    " ", "", "\t\n", "<script>", "'; DROP TABLE x; --", "%00", "..", "x" * 5000, "null", "[]", "{}",
    "[" * 100_000, '{"a":' * 20_000,
]
# Whole JSON bodies nested past any parser's recursion limit (a field holding one is in NASTY).
NESTED_BODIES = ["[" * 100_000, '{"a": ' * 100_000, "[" * 65 + "]" * 65]
TEXT = st.one_of(
    st.sampled_from(NASTY),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40),
)
# JSON bodies may also carry numbers, lists and objects where text is expected.
JSON_VALUE = st.one_of(
    TEXT, st.integers(min_value=-(2**70), max_value=2**70), st.lists(TEXT, max_size=3), st.none(),
    st.dictionaries(st.sampled_from(["a", "b"]), TEXT, max_size=2),
)
SEGMENT = st.one_of(st.sampled_from(["\x00", "²", "٣", "NCT0000000²", "..", "x" * 300]), TEXT.filter(bool))


@dataclass(frozen=True)
class Call:
    method: str
    params: tuple[str, ...] = ()
    json: bool = False  # the body is JSON (the API); otherwise a form post or a query string
    headers: dict[str, str] = field(default_factory=dict)


STUDY_FILTERS = ("q", "tag", "strength", "context", "kind", "year", "page", "page_size")
STUDY_FIELDS = ("study_name", "pmid", "doi", "nct_number", "title", "key_finding", "disease_tags",
                "evidence_strength", "kind", "publication_year", "url", "aliases")
TRIAL_SEARCH = ("condition", "intervention", "sponsor", "q", "phase", "status", "sort", "page_token", "page_size")
TABLIZER = ("q", "year_from", "year_to", "n", "sort", "dir", "level", "compare_a", "compare_b", "conversation")
SCOUT_FORM = ("drug", "disease", "synonyms", "targets", "mechanisms", "atc_codes", "atc_descriptions", "drug_type",
              "profile_json", "previous_profile")
STREAM = {"HTTP_ACCEPT": "text/event-stream"}
AS_JSON = {"HTTP_ACCEPT": "application/json"}

# URL name -> the calls its view answers. A URL missing here fails `test_every_url_pattern_is_fuzzed`.
CALLS: dict[str, list[Call]] = {
    "home": [Call("get")],
    "healthz": [Call("get")],
    "login": [Call("get", ("next",)), Call("post", ("username", "password", "next"))],
    "logout": [Call("post", ("next",))],
    "study-list": [Call("get", STUDY_FILTERS), Call("post", STUDY_FIELDS, json=True)],
    "study-detail": [Call("get"), Call("patch", STUDY_FIELDS, json=True), Call("put", STUDY_FIELDS, json=True)],
    "pubmed-api-abstract-search": [Call("get", ("q", "k", "mesh", "exclude_mesh", "year_from", "year_to", "rerank"))],
    "pubmed-api-abstract-search-slash": [Call("get", ("q", "k", "year_from", "year_to"))],
    "pubmed-api-tablizer": [Call("get", ("q", "year_from", "year_to", "n", "sort", "dir", "level"))],
    "pubmed-api-ingestion-list": [Call("post", ("queries", "max_per_query"), json=True)],
    "pubmed-api-ingestion-detail": [Call("get")],
    "trials-api-search": [Call("get", TRIAL_SEARCH)],
    "trials-api-search-slash": [Call("get", TRIAL_SEARCH)],
    "trials-api-detail": [Call("get")],
    "chat-api-conversations": [Call("get", ("page",)), Call("post", ("title", "app"), json=True)],
    "chat-api-conversation": [Call("get")],
    "chat-api-messages": [Call("post", ("question",), json=True)],
    "schema": [Call("get", ("format", "lang"))],
    "api-docs": [Call("get")],
    "api-redoc": [Call("get")],
    "research:tablizer": [Call("get", TABLIZER)],
    "research:snapshot-create": [Call("post", ("label", "state"))],
    "research:snapshot-delete": [Call("post", ("state",))],
    "research:trialscout": [Call("get", (*TRIAL_SEARCH, "conversation"))],
    "research:ask": [Call("post", ("question", "conversation", "state")),
                     Call("post", ("question", "conversation", "state"), headers=AS_JSON)],
    "research:new": [Call("post", ("state",))],
    "research:column-add": [Call("post", ("name", "criteria", "kind", "state"), headers=AS_JSON)],
    "research:column-evaluate": [Call("post", ("state",), headers=AS_JSON)],
    "research:column-delete": [Call("post", ("state",))],
    "research:run": [Call("get")],
    "research:payload": [Call("post", ("state",), headers=AS_JSON)],
    "evidence:library": [Call("get", STUDY_FILTERS)],
    "evidence-api-claims-check": [Call("post", ("text",), json=True)],
    "evidence-api-claims-check-slash": [Call("post", ("text",), json=True)],
    "checker:index": [Call("get"), Call("post", ("text",))],
    "evidence:study-detail": [Call("get")],
    "pubmed:abstract-detail": [Call("get")],
    "trials:trial-detail": [Call("get")],
    "chat:index": [Call("get")],
    "chat:new": [Call("post", ("question",)), Call("post", ("question",), headers=STREAM)],
    "chat:conversation": [Call("get")],
    "chat:message-new": [Call("post", ("question",))],
    "media": [Call("get")],
    "research:scout": [Call("get"), Call("post", SCOUT_FORM)],
    "research:scout-run": [Call("get")],
    "research:scout-resume": [Call("post")],
    "research-api-scout": [Call("get"), Call("post", ("drug", "disease", "profile", "max_pmids"), json=True)],
    "research-api-scout-detail": [Call("get")],
    "research-api-scout-resume": [Call("post", json=True)],
    "research-api-ask": [Call("post", ("question", "state", "conversation"), json=True)],
    "research-api-suggestion": [Call("post", ("state",), json=True)],
    "research-api-columns": [Call("post", ("name", "criteria", "kind", "state"), json=True)],
    "research-api-column-run": [Call("get")],
    "research-api-snapshots": [Call("get"), Call("post", ("label", "state"), json=True)],
    "research-api-snapshot-compare": [Call("get", ("a", "b"))],
    "chat:answer-export": [Call("get", ("format",))],
    "chat-api-answer-export": [Call("get", ("format",))],
    "pubmed-api-abstract-export": [Call("get", ("format", "pmids", "q", "n", "year_from", "year_to"))],
    "research:tablizer-export": [Call("get", ("format", "pmid", "shown"))],
}


def _patterns(resolver: URLResolver, prefix: str = "", namespace: str = "") -> list[tuple[str, str, URLPattern]]:
    found = []
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            if str(entry.pattern).startswith("admin/"):
                continue
            inner = f"{namespace}:{entry.namespace}" if namespace and entry.namespace else entry.namespace or namespace
            found += _patterns(entry, prefix + str(entry.pattern), inner)
        else:
            name = entry.name or "media"
            found.append((f"{namespace}:{name}" if namespace else name, prefix + str(entry.pattern), entry))
    return found


PATTERNS = {name: route for name, route, _ in _patterns(get_resolver())}


def test_every_url_pattern_is_fuzzed() -> None:
    assert set(PATTERNS) <= set(CALLS), sorted(set(PATTERNS) - set(CALLS))
    assert set(CALLS) - set(PATTERNS) <= {"media"}  # uploads are served by Django only with DJANGO_DEBUG=1


@pytest.fixture
def world(
    db: None, settings: Any, eutils: Any, esearch_for: Any, ctgov: Any, recording: Any  # noqa: F811
) -> dict[str, Any]:
    """A curator with one of everything a URL can point at; PubMed finds nothing, ClinicalTrials.gov one page."""
    eutils.expect_request("/entrez/eutils/esearch.fcgi").respond_with_data(
        esearch_for([]), content_type="application/json"
    )
    eutils.expect_request(re.compile("/entrez/eutils/.*")).respond_with_data(
        "<PubmedArticleSet></PubmedArticleSet>", content_type="text/xml"
    )
    ctgov.expect_request("/api/v2/studies").respond_with_data(
        recording("biomcp/search_phelan_limit5_20260811.json"), content_type="application/json"
    )
    ctgov.expect_request(re.compile("/api/v2/studies/.*")).respond_with_data("Not Found", status=404)
    settings.CTGOV_MAX_RETRIES = 0
    settings.ANTHROPIC_BASE_URL = "http://127.0.0.1:9"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.LLM_PROVIDER = "extractive"
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
    curator = UserFactory(username="fuzz-curator", is_staff=True, is_superuser=True, groups=["curator"])
    conversation = Conversation.objects.create(user=curator, app=ConversationApp.TABLIZER, title="Fuzz")
    message = Message.objects.create(conversation=conversation, role=MessageRole.ASSISTANT, content="Hello.")
    column = AIColumnFactory(user=curator, page=ConversationApp.TABLIZER)
    run = AIColumnRun.objects.create(column=column, item_ids=["22663011"], total=1)
    scout = ScoutRun.objects.create(
        user=curator, drug="gefitinib", disease="lung cancer", max_pmids=20, status=ScoutRunStatus.FAILED
    )
    return {
        "user": curator,
        "int": [StudyFactory().pk, conversation.pk, message.pk, column.pk, 0, 2**63, 10**30],
        "uuid": [str(run.pk), str(scout.pk), str(uuid.uuid4())],
    }


# The NCBI rate-limit ledger: a request that fetched a missing abstract (a 404 page) took a slot as any request does,
# and whether older slots left the window in the same call depends on the clock. It holds no one's data.
LEDGERS = {"pubmed.NcbiRequestSlot"}


def _row_counts() -> dict[str, int]:
    return {
        model._meta.label: model._base_manager.count()
        for app in OWN_APPS
        for model in apps.get_app_config(app).get_models()
        if model._meta.label not in LEDGERS
    }


PLACEHOLDER = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")  # path() routes
GROUP = re.compile(r"\(\?P<(?P<name>\w+)>[^)]*\)")  # re_path() routes: the router's, media


def _segment(converter: str, name: str, data: st.DataObject, world: dict[str, Any]) -> str:
    if converter == "int" or name == "pk":
        return str(data.draw(st.sampled_from(world["int"]), label=name))
    if converter == "uuid":
        return data.draw(st.sampled_from(world["uuid"]), label=name)
    return quote(data.draw(SEGMENT, label=name), safe="")


def _path(route: str, data: st.DataObject, world: dict[str, Any]) -> str:
    """Return a concrete path for the route: real or absurd ids, generated text for string segments."""
    path = PLACEHOLDER.sub(lambda m: _segment(m["converter"] or "str", m["name"], data, world), route)
    path = GROUP.sub(lambda m: _segment("str", m["name"], data, world), path)
    return "/" + path.replace("^", "").replace("$", "")


@pytest.mark.parametrize("debug", [False, True], ids=["DEBUG=0", "DEBUG=1"])
@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_input_never_gives_a_5xx_or_a_partial_write(
    client: Client, world: dict[str, Any], name: str, debug: bool, data: st.DataObject
) -> None:
    with override_settings(DEBUG=debug):
        _fuzz_once(client, world, name, data)


def _fuzz_once(client: Client, world: dict[str, Any], name: str, data: st.DataObject) -> None:
    route = PATTERNS[name]
    call = data.draw(st.sampled_from(CALLS[name]), label="call")
    path = _path(route, data, world)
    chosen = data.draw(st.lists(st.sampled_from(call.params), unique=True), label="params") if call.params else []
    values = {param: data.draw(JSON_VALUE if call.json else TEXT, label=param) for param in chosen}
    if data.draw(st.booleans(), label="signed in"):
        client.force_login(world["user"])
    else:
        client.logout()
    before = _row_counts()
    send = getattr(client, call.method)
    if call.method == "get":
        response = send(path, values, **call.headers)
    elif call.json:
        nested = data.draw(st.sampled_from([None, *NESTED_BODIES]), label="nested body")
        body = nested if nested is not None else json.dumps(values)
        response = send(path, body, content_type="application/json", **call.headers)
    else:
        response = send(path, values, **call.headers)
    assert response.status_code < 500, (path, values, response.status_code)
    if path.startswith("/api/") and response.status_code >= 400:
        assert response["Content-Type"] == "application/json", (path, response.status_code, response.content[:200])
        error = response.json()["error"]
        assert set(error) >= {"code", "message"} and error["message"], (path, values, error)
    if response.status_code >= 400:
        assert _row_counts() == before, (path, values, response.status_code)
