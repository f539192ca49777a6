"""Admin pages of the vocabulary the answers are judged with: tags, abbreviations, drug classes, the words
that name no topic, anchor scenarios, classification rules and decision aids (registered when `evidence.admin`
is loaded)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import F, Func, Q, QuerySet, TextField, Value
from django.http import HttpRequest
from django.utils.html import format_html

from evidence.admin_base import CuratorEditableAdmin, CuratorEditableInline
from evidence.models import (
    Abbreviation,
    AnchorScenario,
    ClassificationRule,
    DecisionAid,
    DecisionStep,
    DrugClass,
    Tag,
    Word,
    WordClass,
)


@admin.register(Tag)
class TagAdmin(CuratorEditableAdmin):
    list_display = (
        "code", "kind", "label", "broader", "synonym_count", "is_imaging_term", "is_generic", "is_modifier",
        "answer_kind",
    )
    list_filter = ("kind", "is_imaging_term", "is_generic", "is_modifier", "answer_kind")
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
    list_display = ("term", "expansion_list", "context_list", "case_sensitive")
    list_filter = ("case_sensitive",)
    search_fields = ("term",)
    ordering = ("term", "pk")

    @admin.display(description="stands for")
    def expansion_list(self, obj: Abbreviation) -> str:
        return ", ".join(obj.expansions)

    @admin.display(description="read so when the question mentions")
    def context_list(self, obj: Abbreviation) -> str:
        return ", ".join(obj.context) or "(usual reading)"


@admin.register(DrugClass)
class DrugClassAdmin(CuratorEditableAdmin):
    list_display = ("name", "member_list", "source")
    search_fields = ("name",)
    ordering = ("name",)

    @admin.display(description="drugs in the class")
    def member_list(self, obj: DrugClass) -> str:
        return ", ".join(obj.members)


class WordForm(forms.ModelForm):
    classes = forms.MultipleChoiceField(
        choices=WordClass.choices, widget=forms.CheckboxSelectMultiple, help_text="Every class the word belongs to."
    )

    class Meta:
        model = Word
        fields = ("text", "classes")


class WordClassFilter(admin.SimpleListFilter):
    title = "class"
    parameter_name = "class"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return list(WordClass.choices)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(classes__contains=[self.value()]) if self.value() in WordClass.values else queryset


@admin.register(Word)
class WordAdmin(CuratorEditableAdmin):
    form = WordForm
    list_display = ("text", "class_list")
    list_filter = (WordClassFilter,)
    search_fields = ("text",)

    @admin.display(description="classes")
    def class_list(self, obj: Word) -> str:
        return ", ".join(WordClass(name).label.split(" (")[0] for name in obj.classes if name in WordClass.values)


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


class DecisionStepInline(CuratorEditableInline):
    """A diagram's boxes in order, each resting on a curated finding (its review status is shown with the box)."""

    model = DecisionStep
    fields = ("position", "text", "finding")
    autocomplete_fields = ("finding",)


@admin.register(DecisionAid)
class DecisionAidAdmin(CuratorEditableAdmin):
    inlines = (DecisionStepInline,)
    list_display = ("title", "thumbnail", "tag_list", "source", "is_active")
    list_filter = ("is_active",)
    search_fields = ("title", "caption")
    autocomplete_fields = ("source",)
    list_select_related = ("source",)

    @admin.display(description="image or boxes")
    def thumbnail(self, obj: DecisionAid) -> str:
        if not obj.image:
            return f"diagram of {obj.steps.count()} boxes"
        return format_html('<img src="{}" alt="{}" style="max-height:48px">', obj.image.url, obj.alt_text)

    @admin.display(description="tags")
    def tag_list(self, obj: DecisionAid) -> str:
        return f"{', '.join(obj.disease_tags)} / {', '.join(obj.decision_tags)}"
