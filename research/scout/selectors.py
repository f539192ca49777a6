"""Reads for the Evidence Scout: a user's runs, the drug-disease pairs searched, profiles used before."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from pubmed.models import SearchQuery
from research.models import ScoutRun


def scout_run_get(*, run_id: Any, user: Any, for_write: bool = False) -> ScoutRun | None:
    """Return run `run_id` if `user` may see it (their own, or any for staff), else None.

    With `for_write` (resume, and any other change) only the user's own run: staff read every run
    to help and audit, but acting on one would spend its owner's budget in their name.
    """
    if not getattr(user, "is_authenticated", False):
        return None
    runs = ScoutRun.objects.all() if user.is_staff and not for_write else ScoutRun.objects.filter(user=user)
    return runs.filter(pk=run_id).first()


def scout_runs_for(*, user: Any, limit: int = 20) -> QuerySet[ScoutRun]:
    """Return the user's most recent runs, newest first."""
    return ScoutRun.objects.filter(user=user).order_by("-created_at")[:limit]


def search_queries_recent(*, limit: int = 50) -> QuerySet[SearchQuery]:
    """Return the `search_queries` rows (one per drug-disease pair), most recently searched first."""
    return SearchQuery.objects.order_by("-searched_at")[:limit]


def scout_profiles_previous(*, user: Any, limit: int = 10) -> list[dict[str, Any]]:
    """Return the distinct non-empty drug profiles of the user's earlier runs: [{"drug", "profile"}], newest first."""
    runs = ScoutRun.objects.filter(user=user).exclude(profile={}).order_by("-created_at").values("drug", "profile")
    runs = runs[:100]
    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    for run in runs:
        if not any(run["profile"].values()):
            continue
        key = f"{run['drug'].lower()}|{sorted(run['profile'].items())}"
        if key not in seen:
            seen.add(key)
            found.append({"drug": run["drug"], "profile": run["profile"]})
        if len(found) >= limit:
            break
    return found
