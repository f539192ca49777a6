"""Every admin URL of every registered model, for anonymous users, view-only staff and curators.

The URLs are walked from the admin site itself, so a model registered later is covered without
editing this file. View-only staff (every `view_*` permission, not in the `curator` group) may read
everything and change nothing; curators edit and revert the evidence library; anonymous users are
sent to the admin login.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import models
from django.test import Client
from django.urls import URLPattern, reverse
from django.utils import timezone
from PIL import Image
from rest_framework.authtoken.models import Token, TokenProxy

from chat.models import Conversation
from evidence.admin_base import CuratorEditableAdmin
from evidence.models import (
    Abbreviation,
    AnchorScenario,
    ClassificationRule,
    DecisionAid,
    DrugClass,
    Finding,
    Study,
    Tag,
    Word,
)
from pubmed.models import Abstract, EsearchCacheEntry, Ingestion, ScoutCacheEntry, ScoutCacheKind, SearchQuery
from research.models import ScoutRun
from tests.evidence.factories import GuidanceItemFactory, StudyFactory
from tests.factories import UserFactory
from tests.trials.factories import TrialFactory

pytestmark = pytest.mark.django_db

# Admin views that only read; every other view writes (add, delete, import, password change).
READ_VIEWS = {"changelist", "change", "history", "simple_history", "export"}
WRITE_VIEWS = {"add", "delete", "import", "process_import", "password_change"}
# What a POST carries: enough to delete through the bulk action, confirm a delete or overwrite a title.
POST_DATA = {
    "action": "delete_selected",
    "index": "0",
    "post": "yes",
    "title": "PLANTED BY A VIEWER",
    "study_name": "PLANTED",
    "key_finding": "Planted finding.",
    "format": "0",
}


@dataclass(frozen=True)
class AdminUrl:
    model: type[models.Model]
    view: str  # the part of the URL name after `<app>_<model>_`, or "object" for `<id>/`
    path: str
    curator_editable: bool


def _png() -> SimpleUploadedFile:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), "white").save(buffer, format="PNG")
    return SimpleUploadedFile("aid.png", buffer.getvalue(), content_type="image/png")


@pytest.fixture
def rows(settings: Any, tmp_path: Any) -> dict[type[models.Model], models.Model]:
    """One row of every model the admin shows; the study has two versions in its history."""
    settings.MEDIA_ROOT = str(tmp_path)
    study = StudyFactory(title="Original title")
    study.title = "Second title"
    study.save()
    scenario = AnchorScenario.objects.create(key="af-ckd", title="AF with CKD")
    owner = UserFactory(username="owner")
    instances: list[models.Model] = [
        study,
        Finding.objects.create(
            study=study, statement="Apixaban lowered stroke (HR 0.63).", source_url="https://example.org/",
            locator="Abstract",
        ),
        GuidanceItemFactory(),
        Tag.objects.create(code="af", kind="disease", label="atrial fibrillation"),
        Abbreviation.objects.create(term="NAC", expansions=["N-acetylcysteine"]),
        Word.objects.create(text="kindly", classes=["request"]),
        DrugClass.objects.create(name="macrolide", members=["azithromycin"], source="https://example.org/"),
        scenario,
        ClassificationRule.objects.create(name="af-ckd", classification="AF with CKD", anchor_scenario=scenario),
        DecisionAid.objects.create(title="Aid", image=_png(), alt_text="A flowchart"),
        Abstract.objects.create(pmid="12345678", title="An abstract"),
        SearchQuery.objects.create(drug="apixaban", disease="af", pubmed_query="apixaban AND af"),
        EsearchCacheEntry.objects.create(
            key="k" * 64, term="af", count=0, expires_at=timezone.now() + timedelta(days=1)
        ),
        Ingestion.objects.create(queries=["af"]),
        ScoutCacheEntry.objects.create(
            kind=ScoutCacheKind.values[0], key="s" * 64, label="gefitinib", value={},
            expires_at=timezone.now() + timedelta(days=1),
        ),
        ScoutRun.objects.create(user=owner, drug="gefitinib", disease="lung cancer", max_pmids=20),
        TrialFactory(),
        Conversation.objects.create(user=owner, title="A conversation"),
        Token.objects.create(user=owner),
        Group.objects.get_or_create(name="curator")[0],
        owner,
        AccessAttempt.objects.create(
            username="owner", ip_address="10.0.0.1", user_agent="test", http_accept="*/*", path_info="/accounts/login/",
            get_data="", post_data="", failures_since_start=1,
        ),
        AccessLog.objects.create(username="owner", ip_address="10.0.0.1", user_agent="test", http_accept="*/*",
                                 path_info="/accounts/login/"),
        AccessFailureLog.objects.create(username="owner", ip_address="10.0.0.1", user_agent="test", http_accept="*/*",
                                        path_info="/accounts/login/"),
    ]
    found = {type(instance): instance for instance in instances}
    # The token admin registers a proxy whose primary key is its user's.
    found[TokenProxy] = TokenProxy.objects.get(user=owner)
    return found


def _history_id(instance: models.Model) -> int | None:
    history = getattr(type(instance), "history", None)
    if history is None:
        return None
    return history.filter(**{instance._meta.pk.attname: instance.pk}).earliest("history_date").history_id


def _admin_urls(rows: dict[type[models.Model], models.Model]) -> Iterator[AdminUrl]:
    for model, model_admin in admin.site._registry.items():
        instance = rows[model]
        prefix = f"{model._meta.app_label}_{model._meta.model_name}_"
        for pattern in model_admin.get_urls():
            assert isinstance(pattern, URLPattern)
            view = pattern.name.removeprefix(prefix) if pattern.name else "object"
            if view == "simple_history":
                path = reverse(f"admin:{pattern.name}", args=[instance.pk, _history_id(instance)])
            elif view in {"changelist", "add", "import", "process_import", "export"}:
                path = reverse(f"admin:{pattern.name}")
            elif view == "object":
                path = reverse("admin:index") + f"{model._meta.app_label}/{model._meta.model_name}/{instance.pk}/"
            else:
                path = reverse(f"admin:{pattern.name}", args=[instance.pk])
            yield AdminUrl(model, view, path, isinstance(model_admin, CuratorEditableAdmin))


def _fingerprint() -> dict[str, list[tuple]]:
    """Every row of every admin model and of its history, to prove a refused request changed nothing."""
    tables: dict[str, list[tuple]] = {}
    for model in admin.site._registry:
        history = getattr(model, "history", None)
        for each in filter(None, [model, history.model if history else None]):
            tables[each._meta.label] = sorted(map(repr, each._base_manager.values_list()))
    return tables


@pytest.fixture
def viewer() -> Any:
    user = UserFactory(username="viewer", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    return user


@pytest.fixture
def curator() -> Any:
    return UserFactory(username="curator", is_staff=True, groups=["curator"])


def test_the_walk_covers_every_registered_model_and_every_view(rows: dict) -> None:
    urls = list(_admin_urls(rows))
    assert {url.model for url in urls} == set(admin.site._registry)
    assert {url.view for url in urls} <= READ_VIEWS | WRITE_VIEWS | {"object"}
    assert len({url.path for url in urls}) == len(urls)
    assert sum(url.view == "simple_history" for url in urls) == 10  # the ten models with a history


def test_anonymous_users_are_sent_to_the_admin_login_and_change_nothing(client: Client, rows: dict) -> None:
    before = _fingerprint()
    for url in _admin_urls(rows):
        for method in (client.get, client.post):
            response = method(url.path, POST_DATA) if method == client.post else method(url.path)
            assert response.status_code == 302, (method.__name__, url)
            assert response["Location"].startswith("/admin/login/"), url
    assert _fingerprint() == before


# API tokens are credentials: no permission short of superuser shows them.
SUPERUSER_ONLY = {TokenProxy}


def _viewer_get_status(url: AdminUrl) -> int:
    if url.view == "object":
        return 302  # redirects to the change page
    if url.model in SUPERUSER_ONLY:
        return 403
    if url.view == "process_import":
        return 405  # POST only
    return 200 if url.view in READ_VIEWS else 403


def test_view_only_staff_read_every_page_and_are_refused_every_write(client: Client, rows: dict, viewer) -> None:
    client.force_login(viewer)
    before = _fingerprint()
    for url in _admin_urls(rows):
        response = client.get(url.path)
        assert response.status_code == _viewer_get_status(url), url
        if url.view in {"change", "simple_history"}:
            html = response.content.decode()
            assert 'name="_save"' not in html and 'type="submit" value="Revert"' not in html, url
            assert '<input type="text"' not in html and "<textarea" not in html, url
        response = client.post(url.path, POST_DATA)
        if url.model in SUPERUSER_ONLY and url.view != "object":
            assert response.status_code == 403, url
        elif url.view == "changelist":
            assert response.status_code in (200, 302), url  # no action is offered, so none runs
        elif url.view in {"export", "history"}:
            assert response.status_code == 200, url  # reading (the export as a file)
        elif url.view == "object":
            assert response.status_code == 302, url
        else:
            assert response.status_code == 403, url
    assert _fingerprint() == before


def _curator_get_status(url: AdminUrl) -> int:
    if url.view == "object":
        return 302  # the redirect to the change page, which checks permissions itself
    if not url.curator_editable:
        # Outside the library a curator holds no model permissions (the `curator` group grants none).
        return 403
    if url.view == "process_import":
        return 405
    return 200


def test_curators_open_every_page_of_the_library_and_nothing_else(client: Client, rows: dict, curator) -> None:
    client.force_login(curator)
    for url in _admin_urls(rows):
        response = client.get(url.path)
        assert response.status_code == _curator_get_status(url), url
        if url.view == "simple_history" and url.curator_editable:
            assert 'value="Revert"' in response.content.decode(), url


def test_view_only_staff_never_see_an_api_token(client: Client, rows: dict, viewer) -> None:
    key = Token.objects.get().key
    client.force_login(viewer)
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 403
    index = client.get("/admin/").content.decode()
    assert "/admin/authtoken/" not in index and key not in index


def _study_form(study: Study, **changes: str) -> dict[str, str]:
    data = {
        "study_name": study.study_name,
        "kind": study.kind,
        "evidence_strength": str(study.evidence_strength),
        "result_context": study.result_context,
        "pmid": study.pmid,
        "title": study.title,
        "key_finding": study.key_finding,
        "disease_tags": ",".join(study.disease_tags),
        "identifier_checks-TOTAL_FORMS": "0",
        "identifier_checks-INITIAL_FORMS": "0",
        "findings-TOTAL_FORMS": "0",
        "findings-INITIAL_FORMS": "0",
    }
    data.update(changes)
    return data


def test_view_only_staff_cannot_plant_a_finding_through_the_history_page(client: Client, viewer) -> None:
    study = StudyFactory(title="Original", key_finding="What the trial showed.")
    version = study.history.get().history_id
    client.force_login(viewer)
    url = reverse("admin:evidence_study_simple_history", args=[study.pk, version])
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="key_finding"' not in page.content.decode()
    response = client.post(url, _study_form(study, key_finding="Planted: the drug halves mortality."))
    assert response.status_code == 403
    study.refresh_from_db()
    assert study.key_finding == "What the trial showed."
    assert study.history.count() == 1


def test_a_curator_reverts_a_study_to_an_earlier_version(client: Client, curator) -> None:
    study = StudyFactory(title="Original")
    first = study.history.get().history_id
    study.title = "Edited"
    study.save()
    client.force_login(curator)
    url = reverse("admin:evidence_study_simple_history", args=[study.pk, first])
    old = client.get(url)
    assert old.context["adminform"].form.initial["title"] == "Original"
    response = client.post(url, _study_form(study, title="Original"))
    assert response.status_code == 302, response.content.decode()[:1000]
    study.refresh_from_db()
    assert study.title == "Original"
    assert study.history.first().history_user == curator
