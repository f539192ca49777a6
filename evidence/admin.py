"""Curator admin for the evidence library.

Members of the `curator` group (and superusers) edit and revert; every other staff user may only view,
including the history of each row and its old versions (`evidence.admin_base`). The studies and
guidance items are here; the vocabulary's pages are in `evidence.admin_vocabulary`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from evidence import admin_vocabulary  # noqa: F401  (registers the vocabulary's admin pages)
from evidence.admin_base import CuratorEditableAdmin, is_curator
from evidence.admin_findings import FindingInline
from evidence.identifier_checks import identifier_checks_queue
from evidence.models import (
    GuidanceItem,
    IdentifierCheck,
    Study,
)
from evidence.resources import GuidanceItemResource, StudyResource


class SuperuserTokenAdmin(TokenAdmin):
    """API tokens are credentials: only superusers see, create or delete them.

    A `view_tokenproxy` permission would otherwise let view-only staff read a curator's token and write
    to the library through the API as that curator.
    """

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser


admin.site.unregister(TokenProxy)
admin.site.register(TokenProxy, SuperuserTokenAdmin)


class TagListFilter(admin.SimpleListFilter):
    title = "disease tag"
    parameter_name = "tag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        from evidence.selectors import library_tags

        return [(tag, tag) for tag in library_tags()]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value():
            return queryset.filter(disease_tags__contains=[self.value()])
        return queryset


# The admin does not load the site stylesheet: its badges carry their own colours.
_RED_BADGE = "background:#b3261e;color:#fff;padding:1px 7px;border-radius:9px;white-space:nowrap"
_AMBER_BADGE = "background:#fdf0d5;color:#8a5300;padding:1px 7px;border-radius:9px;white-space:nowrap"


class IntegrityListFilter(admin.SimpleListFilter):
    """Studies whose latest PubMed check found a retraction or an expression of concern."""

    title = "PubMed integrity"
    parameter_name = "integrity"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            ("flagged", "Retracted or expression of concern"),
            ("retracted", "Retracted"),
            ("concern", "Expression of concern"),
            ("clear", "Checked, no notice"),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "flagged":
            return queryset.filter(Q(_check_retracted=True) | Q(_check_concern=True))
        if value == "retracted":
            return queryset.filter(_check_retracted=True)
        if value == "concern":
            return queryset.filter(_check_concern=True)
        if value == "clear":
            return queryset.filter(_check_retracted=False, _check_concern=False)
        return queryset


class IdentifierCheckInline(admin.TabularInline):
    model = IdentifierCheck
    extra = 0
    can_delete = False
    fields = (
        "checked_at", "status", "pmid", "pmid_exists", "similarity", "retracted", "expression_of_concern",
        "pubmed_title", "detail",
    )
    readonly_fields = fields
    ordering = ("-checked_at",)
    max_num = 0
    verbose_name_plural = "PubMed identifier checks"

    @admin.display(description="title similarity")
    def similarity(self, obj: IdentifierCheck) -> str:
        return f"{obj.title_similarity:.0%}" if obj.title_similarity is not None else "-"


@admin.register(Study)
class StudyAdmin(CuratorEditableAdmin):
    resource_classes = [StudyResource]
    list_display = (
        "study_name",
        "kind",
        "publication_year",
        "strength",
        "identifier_links",
        "tag_list",
        "pubmed_check",
        "integrity",
    )
    list_display_links = ("study_name",)
    search_fields = ("study_name", "aliases", "pmid", "doi", "nct_number", "title")
    list_filter = (
        TagListFilter, IntegrityListFilter, "evidence_strength", "kind", "result_context", "publication_year"
    )
    list_per_page = 50
    ordering = ("-evidence_strength", "-publication_year", "study_name")
    readonly_fields = ("created_at", "updated_at")
    autocomplete_fields = ("guidance_item",)
    inlines = [FindingInline, IdentifierCheckInline]
    actions = ["verify_identifiers"]
    fieldsets = (
        (None, {"fields": ("study_name", "aliases", "kind", "evidence_strength", "result_context")}),
        (
            "Identifiers",
            {
                "fields": ("pmid", "doi", "nct_number", "pmcid", "url"),
                "description": "At least one of PMID, DOI or NCT number is required.",
            },
        ),
        (
            "Publication",
            {"fields": ("title", "authors_short", "journal", "publication_year", "citation", "organization")},
        ),
        ("What it shows", {"fields": ("key_finding", "sample_size", "study_design", "guidance_item")}),
        ("Tags", {"fields": ("disease_tags", "decision_tags", "anchor_scenarios", "clinical_settings", "test_names")}),
        ("History", {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    )

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> Any:
        # Array fields (aliases) and "PMID: 123" pastes: defer to the library's own search.
        from evidence.selectors import study_search

        if not search_term:
            return super().get_search_results(request, queryset, search_term)
        matches = study_search(text=search_term).values("pk")
        return queryset.filter(pk__in=matches), False

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        latest = IdentifierCheck.objects.filter(study=OuterRef("pk")).order_by("-checked_at")
        return (
            super()
            .get_queryset(request)
            .annotate(
                _check_status=Subquery(latest.values("status")[:1]),
                _check_similarity=Subquery(latest.values("title_similarity")[:1]),
                _check_retracted=Subquery(latest.values("retracted")[:1]),
                _check_concern=Subquery(latest.values("expression_of_concern")[:1]),
            )
        )

    @admin.display(description="strength", ordering="evidence_strength")
    def strength(self, obj: Study) -> str:
        return obj.strength_label

    @admin.display(description="identifiers")
    def identifier_links(self, obj: Study) -> str:
        links = [
            (url, label)
            for url, label in (
                (obj.pubmed_url, f"PMID {obj.pmid}"),
                (obj.doi_url, "DOI"),
                (obj.ctgov_url, obj.nct_number),
            )
            if url
        ]
        return format_html_join(" · ", '<a href="{}" target="_blank" rel="noopener">{}</a>', links)

    @admin.display(description="disease tags")
    def tag_list(self, obj: Study) -> str:
        return ", ".join(obj.disease_tags)

    @admin.display(description="PubMed check")
    def pubmed_check(self, obj: Study) -> str:
        status = getattr(obj, "_check_status", None)
        if not status:
            return "-"
        similarity = getattr(obj, "_check_similarity", None)
        label = IdentifierCheck.Status(status).label
        if similarity is not None:
            return format_html("{} ({}% title match)", label, round(similarity * 100))
        return label

    @admin.display(description="PubMed integrity")
    def integrity(self, obj: Study) -> str:
        badges = []
        if getattr(obj, "_check_retracted", None):
            badges.append(format_html('<strong class="integrity-retracted" style="{}" title="{}">Retracted</strong>',
                                      _RED_BADGE, "PubMed marks this PMID retracted; it is kept out of answers."))
        if getattr(obj, "_check_concern", None):
            badges.append(format_html('<strong class="integrity-concern" style="{}">Expression of concern</strong>',
                                      _AMBER_BADGE))
        return format_html_join(" ", "{}", ((badge,) for badge in badges)) if badges else "-"

    @admin.action(description="Verify identifiers against PubMed")
    def verify_identifiers(self, request: HttpRequest, queryset: QuerySet) -> None:
        queue = identifier_checks_queue()
        if queue is None:  # get_actions offers the action only once a queue is registered
            raise PermissionDenied("No installed app checks identifiers against PubMed.")
        study_ids = list(queryset.values_list("pk", flat=True))
        transaction.on_commit(lambda: queue(study_ids))
        self.message_user(
            request,
            f"Verification of {len(study_ids)} stud{'y' if len(study_ids) == 1 else 'ies'} against PubMed "
            "was queued; results appear in the 'PubMed check' column and on each study.",
            messages.SUCCESS,
        )

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        if not is_curator(request.user) or identifier_checks_queue() is None:
            actions.pop("verify_identifiers", None)
        return actions


@admin.register(GuidanceItem)
class GuidanceItemAdmin(CuratorEditableAdmin):
    resource_classes = [GuidanceItemResource]
    list_display = ("title", "tags", "study_count")
    search_fields = ("title", "statement")

    @admin.display(description="tags")
    def tags(self, obj: GuidanceItem) -> str:
        return ", ".join([*obj.disease_tags, *obj.decision_tags])

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(_study_count=Count("studies"))

    @admin.display(description="studies", ordering="_study_count")
    def study_count(self, obj: GuidanceItem) -> int:
        return obj._study_count  # type: ignore[attr-defined]  # annotated by get_queryset
