"""What every admin page of the evidence library shares: curators edit, other staff only view."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import Http404, HttpRequest, HttpResponse
from import_export.admin import ImportExportModelAdmin
from simple_history.admin import SimpleHistoryAdmin

from config.api import CURATOR_GROUP
from config.inputs import AsciiIntegerFormField, parse_ascii_int


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


class CuratorEditableInline(admin.TabularInline):
    """Rows edited on their parent's page (a study's findings, a diagram's boxes): curators edit, other staff view."""

    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_curator(request.user)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_curator(request.user)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_curator(request.user)
