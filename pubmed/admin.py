"""Admin for the abstract store, searches, the esearch cache and ingestion jobs (read-mostly)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from pubmed.models import Abstract, AbstractChunk, EsearchCacheEntry, Ingestion, ScoutCacheEntry, SearchQuery


class AbstractChunkInline(admin.TabularInline):
    model = AbstractChunk
    fields = ("ordinal", "section", "text", "embedding_model", "embedding_dim")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[AbstractChunk]:
        return super().get_queryset(request).defer("embedding")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Abstract)
class AbstractAdmin(admin.ModelAdmin):
    list_display = (
        "pmid", "title", "journal", "year", "evidence_level", "evidence_level_inferred", "is_retracted",
        "has_expression_of_concern", "has_instructions", "source", "fetched_at",
    )
    list_filter = (
        "is_retracted", "has_expression_of_concern", "has_instructions", "evidence_level", "source", "is_book", "year",
    )
    search_fields = ("pmid", "title", "doi", "pmcid")
    readonly_fields = ("content_hash", "fetched_at", "updated_at", "has_instructions", "instruction_sentences")
    inlines = [AbstractChunkInline]
    date_hierarchy = "fetched_at"


@admin.register(SearchQuery)
class SearchQueryAdmin(admin.ModelAdmin):
    list_display = ("drug", "disease", "searched_at", "created_at")
    search_fields = ("drug", "disease", "pubmed_query")


@admin.register(EsearchCacheEntry)
class EsearchCacheEntryAdmin(admin.ModelAdmin):
    list_display = ("term", "count", "fetched_at", "expires_at")
    search_fields = ("term",)
    readonly_fields = ("key", "term", "params", "count", "pmids", "query_translation", "fetched_at", "expires_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ScoutCacheEntry)
class ScoutCacheEntryAdmin(admin.ModelAdmin):
    list_display = ("kind", "label", "created_at", "expires_at")
    list_filter = ("kind",)
    search_fields = ("label",)
    readonly_fields = ("kind", "key", "label", "value", "created_at", "expires_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Ingestion)
class IngestionAdmin(admin.ModelAdmin):
    list_display = ("id", "status", "queries", "found", "new", "embedded", "failed", "created_at", "finished_at")
    list_filter = ("status",)
    readonly_fields = (
        "id", "queries", "max_per_query", "status", "found", "new", "embedded", "failed", "to_fetch", "fetched",
        "pmids", "errors", "timings", "task_id", "created_by", "created_at", "started_at", "finished_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
