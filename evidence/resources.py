"""CSV/JSON import and export of the library (django-import-export), used by the admin."""

from __future__ import annotations

from typing import Any

from import_export import fields, resources, widgets

from evidence.models import EvidenceStrength, GuidanceItem, Study


class StrengthWidget(widgets.Widget):
    """Read and write evidence strength as its name (high / moderate / low), not the stored number."""

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> int:
        text = str(value or "").strip().lower()
        by_label = {choice.label: choice.value for choice in EvidenceStrength}
        if text not in by_label:
            raise ValueError(f"evidence_strength must be one of high, moderate, low; got {value!r}.")
        return by_label[text]

    def render(self, value: Any, obj: Any = None, **kwargs: Any) -> str:
        return EvidenceStrength(value).label if value else ""


class TagListWidget(widgets.SimpleArrayWidget):
    """Tags separated by `|` in CSV (commas occur inside aliases); accepts JSON lists as well."""

    def __init__(self) -> None:
        super().__init__(separator="|")

    def clean(self, value: Any, row: Any = None, **kwargs: Any) -> list[str]:
        if isinstance(value, list):
            return [str(item).strip() for item in value if str(item).strip()]
        return [item.strip() for item in super().clean(value, row, **kwargs) if item.strip()]


TAG_FIELDS = ("aliases", "disease_tags", "decision_tags", "anchor_scenarios", "clinical_settings", "test_names")


class StudyResource(resources.ModelResource):
    """One row per study, keyed by study_name; every row is validated before anything is saved."""

    evidence_strength = fields.Field(
        attribute="evidence_strength", column_name="evidence_strength", widget=StrengthWidget()
    )
    guidance_item = fields.Field(
        attribute="guidance_item",
        column_name="guidance_item",
        widget=widgets.ForeignKeyWidget(GuidanceItem, field="title"),
    )

    class Meta:
        model = Study
        import_id_fields = ("study_name",)
        exclude = ("id", "created_at", "updated_at")
        clean_model_instances = True
        skip_unchanged = True
        report_skipped = True
        use_transactions = True
        widgets: dict[str, Any] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name in TAG_FIELDS:
            self.fields[name].widget = TagListWidget()

    def import_instance(self, instance: Study, row: Any, **kwargs: Any) -> None:
        # Missing optional text columns mean "empty", not NULL (the model's text fields are NOT NULL).
        super().import_instance(instance, row, **kwargs)
        for field in ("pmid", "doi", "nct_number", "pmcid"):
            if getattr(instance, field) is None:
                setattr(instance, field, "")


class GuidanceItemResource(resources.ModelResource):
    class Meta:
        model = GuidanceItem
        import_id_fields = ("title",)
        exclude = ("id", "created_at", "updated_at")
        clean_model_instances = True
        skip_unchanged = True
        use_transactions = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name in ("disease_tags", "decision_tags"):
            self.fields[name].widget = TagListWidget()
