"""The local cache of ClinicalTrials.gov study records."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from evidence import identifiers
from trials.constants import phase_label, status_label


class Trial(models.Model):
    """One ClinicalTrials.gov study as last fetched; refreshed when older than CTGOV_CACHE_TTL_SECONDS.

    Dates are kept as the registry reports them ("2006-11" or "2020-07-29"): ClinicalTrials.gov
    dates are often only a month, and inventing a day would misstate them.
    """

    nct_id = models.CharField("NCT number", max_length=11, unique=True, validators=[identifiers.validate_nct])
    nct_id_aliases = ArrayField(
        models.CharField(max_length=11),
        default=list,
        blank=True,
        help_text="Former NCT numbers that ClinicalTrials.gov redirects to this study.",
    )
    brief_title = models.TextField()
    official_title = models.TextField(blank=True)
    brief_summary = models.TextField(blank=True)
    study_type = models.CharField(max_length=32, blank=True)
    phases = ArrayField(models.CharField(max_length=16), default=list, blank=True)
    overall_status = models.CharField(max_length=32, blank=True, db_index=True)
    lead_sponsor = models.TextField(blank=True)
    enrollment = models.PositiveIntegerField(null=True, blank=True)
    enrollment_type = models.CharField(max_length=16, blank=True, help_text="ACTUAL or ESTIMATED.")
    conditions = ArrayField(models.TextField(), default=list, blank=True)
    interventions = models.JSONField(default=list, blank=True, help_text='[{"type": ..., "name": ...}]')
    eligibility_criteria = models.TextField(blank=True, help_text="The full criteria text (Markdown).")
    inclusion_criteria = models.TextField(blank=True)
    exclusion_criteria = models.TextField(blank=True)
    minimum_age = models.CharField(max_length=32, blank=True)
    maximum_age = models.CharField(max_length=32, blank=True)
    sex = models.CharField(max_length=8, blank=True)
    healthy_volunteers = models.BooleanField(null=True, blank=True)
    primary_outcomes = models.JSONField(
        default=list, blank=True, help_text='[{"measure": ..., "description": ..., "time_frame": ...}]'
    )
    secondary_outcomes = models.JSONField(default=list, blank=True)
    start_date = models.CharField(max_length=10, blank=True)
    completion_date = models.CharField(max_length=10, blank=True)
    locations_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty when the record did not include locations."
    )
    last_update = models.CharField(max_length=10, blank=True, help_text="Last update posted on ClinicalTrials.gov.")
    has_results = models.BooleanField(default=False)
    fetched_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["nct_id"]

    def __str__(self) -> str:
        return f"{self.nct_id}: {self.brief_title}"

    @property
    def url(self) -> str:
        return identifiers.ctgov_url(self.nct_id)

    @property
    def phase_label(self) -> str:
        return phase_label(self.phases)

    @property
    def status_label(self) -> str:
        return status_label(self.overall_status)
