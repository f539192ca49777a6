"""Curated findings: what a library study shows, in the form a clinician acts on, with who vouched for it.

A trial's finding is its primary result with the effect size; a guideline's findings are the
recommendations relevant to its anchor scenarios, with their class and level. Each is written in our
own words, traced to a public source (URL and locator) and carries a review status: a seeded or edited
finding awaits review until a curator marks it reviewed (who, when). Changing what a reviewed finding
says sends it back to "awaiting review", so "reviewed" always describes the text shown.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from evidence.models.library import Study, tag_array_field

# What a reviewer vouches for: changing any of these sends a reviewed finding back for review.
REVIEWED_CONTENT = ("statement", "recommendation_class", "evidence_level", "source_url", "locator")


class ReviewStatus(models.TextChoices):
    AWAITING_REVIEW = "awaiting_review", "awaiting review"
    REVIEWED = "reviewed", "reviewed"


class Finding(models.Model):
    """One statement a library study supports, as a clinician would act on it."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="findings")
    statement = models.TextField(
        help_text="The result or recommendation in one or two sentences, in our own words: drug, dose, "
        "duration or threshold stated plainly, every number traceable to the source."
    )
    decision_tags = tag_array_field()
    recommendation_class = models.CharField(
        max_length=60, blank=True, help_text='As the source grades it, e.g. "Class 1" or "strong recommendation".'
    )
    evidence_level = models.CharField(
        max_length=60, blank=True, help_text='As the source grades it, e.g. "LOE A" or "moderate-quality evidence".'
    )
    source_url = models.URLField(max_length=500, help_text="The public page the statement was checked against.")
    locator = models.CharField(
        max_length=200, help_text='Where in that source: "Abstract, Results", "Section 6.3, recommendation 2".'
    )
    position = models.PositiveSmallIntegerField(default=0, help_text="Order among the study's findings.")
    seed_key = models.CharField(
        max_length=80, blank=True, editable=False, help_text="Set for findings the seed file provides."
    )
    review_status = models.CharField(
        max_length=20, choices=ReviewStatus, default=ReviewStatus.AWAITING_REVIEW, editable=False
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["study", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "seed_key"], condition=~models.Q(seed_key=""), name="finding_unique_seed_key"
            ),
            models.CheckConstraint(
                condition=models.Q(review_status="awaiting_review")
                | (models.Q(review_status="reviewed") & models.Q(reviewed_at__isnull=False)),
                name="finding_reviewed_has_date",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study}: {self.statement[:80]}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and self.is_reviewed:
            before = Finding.objects.filter(pk=self.pk).values(*REVIEWED_CONTENT).first()
            if before is not None and any(before[name] != getattr(self, name) for name in REVIEWED_CONTENT):
                self.review_status = ReviewStatus.AWAITING_REVIEW
                self.reviewed_by = None
                self.reviewed_at = None
        super().save(*args, **kwargs)

    @property
    def is_reviewed(self) -> bool:
        return self.review_status == ReviewStatus.REVIEWED

    @property
    def grade(self) -> str:
        """Return the class and level as the source writes them ("Class 1, LOE A"), or ""."""
        return ", ".join(part for part in (self.recommendation_class, self.evidence_level) if part)

    def review_words(self) -> str:
        """Return the review status as a reader sees it: "reviewed by J. Smith on 26 Nov 2026" or "awaiting review"."""
        if not self.is_reviewed or self.reviewed_at is None:
            return "curated finding, awaiting review"
        who = ""
        if self.reviewed_by is not None:
            who = f" by {self.reviewed_by.get_full_name() or self.reviewed_by.get_username()}"
        return f"curated finding, reviewed{who} on {self.reviewed_at:%d %b %Y}"

    def mark_reviewed(self, user: Any) -> None:
        """Record that `user` checked this finding against its source now."""
        self.review_status = ReviewStatus.REVIEWED
        self.reviewed_by = user
        self.reviewed_at = timezone.now()
