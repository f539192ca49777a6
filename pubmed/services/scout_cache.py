"""The database cache of Evidence Scout stages: PubMed counts, disease normalisations, query expansions."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from pubmed.clients import EutilsClient
from pubmed.models import ScoutCacheEntry, ScoutCacheKind


def scout_cache_key(parts: Any) -> str:
    """Return the cache key of `parts` (JSON-serialisable; strings compared case- and space-insensitively)."""

    def fold(value: Any) -> Any:
        if isinstance(value, str):
            return " ".join(value.split()).lower()
        if isinstance(value, list | tuple):
            return [fold(item) for item in value]
        if isinstance(value, dict):
            return {key: fold(item) for key, item in value.items()}
        return value

    return hashlib.sha256(json.dumps(fold(parts), sort_keys=True).encode()).hexdigest()


def scout_cache_get(*, kind: ScoutCacheKind, key: str) -> Any | None:
    """Return the unexpired cached value of `kind` under `key`, or None."""
    entry = ScoutCacheEntry.objects.filter(kind=kind, key=key, expires_at__gt=timezone.now()).first()
    return entry.value if entry is not None else None


def scout_cache_put(*, kind: ScoutCacheKind, key: str, label: str, value: Any) -> None:
    """Store `value` for `SCOUT_CACHE_SECONDS`, replacing any earlier entry."""
    now = timezone.now()
    ScoutCacheEntry.objects.update_or_create(
        kind=kind,
        key=key,
        defaults={
            "label": label[:300],
            "value": value,
            "created_at": now,
            "expires_at": now + timedelta(seconds=settings.SCOUT_CACHE_SECONDS),
        },
    )


def pubmed_count(*, query: str, client: EutilsClient) -> int:
    """Return PubMed's hit count for `query`, asking NCBI (retmax=0) only when no cached count is fresh."""
    key = scout_cache_key(["count", query])
    cached = scout_cache_get(kind=ScoutCacheKind.COUNT, key=key)
    if isinstance(cached, int):
        return cached
    count = client.esearch(query, retmax=0).count
    scout_cache_put(kind=ScoutCacheKind.COUNT, key=key, label=query, value=count)
    return count
