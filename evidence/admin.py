"""Curator admin for the evidence library.

Members of the `curator` group (and superusers) edit and revert; every other staff user may only view,
including the history of each row and its old versions.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import Count, F, Func, OuterRef, Q, QuerySet, Subquery, TextField, Value
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join
from import_export.admin import ImportExportModelAdmin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy
from simple_history.admin import SimpleHistoryAdmin

from config.api import CURATOR_GROUP
from config.inputs import AsciiIntegerFormField, parse_ascii_int
from evidence.identifier_checks import identifier_checks_queue
from evidence.models import (
    Abbreviation,
    AnchorScenario,
    ClassificationRule,
    DecisionAid,
    GuidanceItem,
    IdentifierCheck,
    Study,
    Tag,
)
from evidence.resources import GuidanceItemResource, StudyResource


def is_curator(user: Any) -> bool:
    """Return True if the user may change the library: active superuser or `curator` group member."""
    return bool(user.is_active and (user.is_superuser or user.groups.filter(name=CURATOR_GROUP).exists()))


class CuratorEditableAdmin(ImportExportModelAdmin, SimpleHistoryAdmin):
    """Admin in which curators edit and import, and other staff view and export."""

    # A URL typed without a scheme is taken as https (Django 6's default, chosen now); numbers in the
    # digits 0-9 only, so a year typed as "١٢٣" is refused rather than stored as 123.
    # (The admin looks overrides up along the field's class hierarchy: IntegerField covers its subclasses.)
    formfield_overrides = {
        models.URLField: {"assume_scheme": "https"},
        models.IntegerField: {"form_class": AsciiIntegerFormField},
    }

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_add_permission(self, request: HttpRequest) -> bool:
        return is_curator(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_curator(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_curator(request.user)

    def has_import_permission(self, request: HttpRequest) -> bool:
        return is_curator(request.user)

    def has_export_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # The history page builds its form without the change flag Django's own change view uses,
        # so a viewer's form is made read-only here; otherwise it would render editable inputs.
        if is_curator(request.user):
            return super().get_readonly_fields(request, obj)
        editable = [
            field.name
            for field in self.model._meta.get_fields()
            if (field.concrete or field.many_to_many) and field.editable and not field.auto_created
        ]
        return [*super().get_readonly_fields(request, obj), *editable]

    def history_form_view(
        self, request: HttpRequest, object_id: str, version_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        """Show an old version of a row; reverting to it (POST) is for curators only."""
        if request.method == "POST" and not self.has_change_history_permission(request):
            raise PermissionDenied("Only curators may revert the evidence library to an earlier version.")
        if parse_ascii_int(object_id) is None or parse_ascii_int(version_id) is None:
            raise Http404(f"No version {version_id!r} of row {object_id!r}: both are numbers (digits 0-9).")
        return super().history_form_view(request, object_id, version_id, extra_context)


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
    inlines = [IdentifierCheckInline]
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


@admin.register(Tag)
class TagAdmin(CuratorEditableAdmin):
    list_display = ("code", "kind", "label", "broader", "synonym_count", "is_imaging_term")
    list_filter = ("kind", "is_imaging_term")
    search_fields = ("code", "label", "synonyms")
    autocomplete_fields = ("broader",)
    ordering = ("kind", "code")

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str) -> Any:
        term = search_term.strip()
        if not term:
            return queryset, False
        synonyms = Func(F("synonyms"), Value(" | "), function="array_to_string", output_field=TextField())
        return (
            queryset.annotate(_synonyms=synonyms).filter(
                Q(code__icontains=term) | Q(label__icontains=term) | Q(_synonyms__icontains=term)
            ),
            False,
        )

    @admin.display(description="synonyms")
    def synonym_count(self, obj: Tag) -> int:
        return len(obj.synonyms)


@admin.register(Abbreviation)
class AbbreviationAdmin(CuratorEditableAdmin):
    list_display = ("term", "expansion_list", "case_sensitive")
    list_filter = ("case_sensitive",)
    search_fields = ("term",)
    ordering = ("term",)

    @admin.display(description="stands for")
    def expansion_list(self, obj: Abbreviation) -> str:
        return ", ".join(obj.expansions)


@admin.register(AnchorScenario)
class AnchorScenarioAdmin(CuratorEditableAdmin):
    list_display = ("key", "title", "tag_list", "anchor_count")
    search_fields = ("key", "title")

    @admin.display(description="tags")
    def tag_list(self, obj: AnchorScenario) -> str:
        return ", ".join([*obj.disease_tags, *obj.decision_tags])

    @admin.display(description="anchor studies")
    def anchor_count(self, obj: AnchorScenario) -> int:
        return obj.anchor_studies().count()


@admin.register(ClassificationRule)
class ClassificationRuleAdmin(CuratorEditableAdmin):
    list_display = ("name", "classification", "priority", "disease_list", "decision_list", "anchor_scenario")
    list_select_related = ("anchor_scenario",)
    search_fields = ("name", "classification")
    list_filter = ("anchor_scenario",)

    @admin.display(description="disease tags (all)")
    def disease_list(self, obj: ClassificationRule) -> str:
        return ", ".join(obj.disease_tags)

    @admin.display(description="decision tags (any)")
    def decision_list(self, obj: ClassificationRule) -> str:
        return ", ".join(obj.decision_tags)


@admin.register(DecisionAid)
class DecisionAidAdmin(CuratorEditableAdmin):
    list_display = ("title", "thumbnail", "tag_list", "source", "is_active")
    list_filter = ("is_active",)
    search_fields = ("title", "caption")
    autocomplete_fields = ("source",)
    list_select_related = ("source",)

    @admin.display(description="image")
    def thumbnail(self, obj: DecisionAid) -> str:
        return format_html('<img src="{}" alt="{}" style="max-height:48px">', obj.image.url, obj.alt_text)

    @admin.display(description="tags")
    def tag_list(self, obj: DecisionAid) -> str:
        return f"{', '.join(obj.disease_tags)} / {', '.join(obj.decision_tags)}"
