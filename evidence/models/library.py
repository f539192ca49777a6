"""The curated evidence library: landmark studies and guidelines, and the PubMed checks of their identifiers."""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Lower
from simple_history.models import HistoricalRecords

from evidence import identifiers
from evidence.levels import LevelAssessment, level_for_study_kind


def tag_array_field() -> ArrayField:
    return ArrayField(models.CharField(max_length=64), default=list, blank=True)


class ResultContext(models.TextChoices):
    POSITIVE = "positive", "Positive result (e.g. ctDNA detected)"
    NEGATIVE = "negative", "Negative result (e.g. ctDNA not detected)"
    BOTH = "both", "Both / not result-specific"
    MONITORING = "monitoring", "Serial monitoring"


class EvidenceStrength(models.IntegerChoices):
    """Ordered by strength: sorting descending puts high first (not alphabetical)."""

    LOW = 1, "low"
    MODERATE = 2, "moderate"
    HIGH = 3, "high"


class StudyKind(models.TextChoices):
    TRIAL = "trial", "Trial"
    COHORT = "cohort", "Cohort"
    GUIDELINE = "guideline", "Guideline"
    META_ANALYSIS = "meta-analysis", "Meta-analysis"
    SYSTEMATIC_REVIEW = "systematic-review", "Systematic review"
    # A trial's protocol or design paper: what is being tested, never an outcome, so never an answer's finding.
    PROTOCOL = "protocol", "Trial protocol (no outcomes)"


class GuidanceItem(models.Model):
    """A piece of clinical guidance (what to do), which one or more library studies support."""

    title = models.CharField(max_length=200, unique=True)
    statement = models.TextField(help_text="The guidance in one or two sentences, in our own words.")
    disease_tags = tag_array_field()
    decision_tags = tag_array_field()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["title"]
        indexes = [GinIndex(fields=["disease_tags"], name="guidance_disease_tags_gin")]

    def __str__(self) -> str:
        return self.title


class Study(models.Model):
    """A landmark study or guideline with at least one verifiable identifier."""

    study_name = models.CharField(max_length=200, unique=True)
    aliases = tag_array_field()
    pmid = models.CharField(
        "PMID",
        max_length=12,
        blank=True,
        validators=[identifiers.validate_pmid],
        help_text="Digits only, e.g. 35657320.",
    )
    pmcid = models.CharField(
        "PMC id",
        max_length=16,
        blank=True,
        validators=[identifiers.validate_pmcid],
        help_text="e.g. PMC9701133.",
    )
    doi = models.CharField(
        "DOI",
        max_length=200,
        blank=True,
        validators=[identifiers.validate_doi],
        help_text="e.g. 10.1056/NEJMoa2200075, without https://doi.org/.",
    )
    nct_number = models.CharField(
        "NCT number",
        max_length=11,
        blank=True,
        validators=[identifiers.validate_nct],
        help_text="NCT followed by 8 digits.",
    )
    title = models.TextField()
    authors_short = models.CharField(max_length=200, blank=True, help_text='e.g. "Tie J et al."')
    journal = models.CharField(max_length=200, blank=True)
    publication_year = models.PositiveSmallIntegerField(null=True, blank=True)
    citation = models.CharField(max_length=200, blank=True, help_text="Volume, issue and pages.")
    organization = models.CharField(max_length=200, blank=True, help_text="Issuing body, for guidelines.")
    disease_tags = tag_array_field()
    decision_tags = tag_array_field()
    anchor_scenarios = tag_array_field()
    result_context = models.CharField(max_length=16, choices=ResultContext, default=ResultContext.BOTH)
    clinical_settings = tag_array_field()
    test_names = tag_array_field()
    key_finding = models.TextField(help_text="What the study showed, in our own words.")
    sample_size = models.PositiveIntegerField(null=True, blank=True)
    citation_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="Times cited (from a citation index), if known; drives the Highly Cited badge."
    )
    evidence_strength = models.PositiveSmallIntegerField(choices=EvidenceStrength, default=EvidenceStrength.MODERATE)
    study_design = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=StudyKind, default=StudyKind.TRIAL)
    url = models.URLField(
        "canonical URL",
        max_length=500,
        blank=True,
        help_text="Direct link (PubMed, DOI, publisher or guideline page) - never a search-engine URL.",
    )
    guidance_item = models.ForeignKey(
        GuidanceItem, null=True, blank=True, on_delete=models.SET_NULL, related_name="studies"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-evidence_strength", "-publication_year", "study_name"]
        verbose_name_plural = "studies"
        indexes = [
            GinIndex(fields=["disease_tags"], name="study_disease_tags_gin"),
            GinIndex(fields=["decision_tags"], name="study_decision_tags_gin"),
            GinIndex(fields=["aliases"], name="study_aliases_gin"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["pmid"],
                condition=~models.Q(pmid=""),
                name="study_unique_pmid",
                violation_error_message="Another study already has this PMID.",
            ),
            models.UniqueConstraint(
                Lower("doi"),
                condition=~models.Q(doi=""),
                name="study_unique_doi",
                violation_error_message="Another study already has this DOI (DOIs compare case-insensitively).",
            ),
            models.UniqueConstraint(
                fields=["nct_number"],
                condition=~models.Q(nct_number=""),
                name="study_unique_nct",
                violation_error_message="Another study already has this NCT number.",
            ),
            models.CheckConstraint(
                condition=~(models.Q(pmid="") & models.Q(doi="") & models.Q(nct_number="")),
                name="study_has_identifier",
                violation_error_message="A study needs at least one identifier: PMID, DOI or NCT number.",
            ),
        ]

    def __str__(self) -> str:
        return self.study_name

    def clean_fields(self, exclude: Any = None) -> None:
        # Forms, the API and the importer call full_clean(): tidy pasted identifiers
        # ("PMID: 123", "https://doi.org/10...", "nct01234567") before the validators judge them.
        self.pmid = (self.pmid or "").strip().removeprefix("PMID:").strip()
        self.doi = identifiers.normalize_doi(self.doi) if self.doi else ""
        self.nct_number = (self.nct_number or "").strip().upper()
        self.pmcid = (self.pmcid or "").strip().upper()
        super().clean_fields(exclude)

    def clean(self) -> None:
        if not (self.pmid or self.doi or self.nct_number):
            raise ValidationError(
                "A study needs at least one identifier: fill in the PMID, the DOI or the NCT number.",
                code="no_identifier",
            )

    @property
    def pubmed_url(self) -> str:
        return identifiers.pubmed_url(self.pmid) if self.pmid else ""

    @property
    def doi_url(self) -> str:
        return identifiers.doi_url(self.doi) if self.doi else ""

    @property
    def ctgov_url(self) -> str:
        return identifiers.ctgov_url(self.nct_number) if self.nct_number else ""

    @property
    def strength_label(self) -> str:
        return EvidenceStrength(self.evidence_strength).label

    @property
    def level(self) -> LevelAssessment:
        """Return the study's level of evidence, mapped from its kind and design."""
        return level_for_study_kind(kind=self.kind, study_design=self.study_design)


class IdentifierCheck(models.Model):
    """One verification of a study's PMID against PubMed (esummary): does it exist, does the title match."""

    class Status(models.TextChoices):
        MATCH = "match", "PMID exists, title matches"
        MISMATCH = "mismatch", "PMID exists, title differs"
        NOT_FOUND = "not_found", "PMID not found in PubMed"
        NO_PMID = "no_pmid", "Study has no PMID"
        ERROR = "error", "Could not reach PubMed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="identifier_checks")
    checked_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status)
    pmid = models.CharField(max_length=12, blank=True)
    pmid_exists = models.BooleanField(null=True)
    pubmed_title = models.TextField(blank=True)
    title_similarity = models.FloatField(null=True, help_text="0-1, normalised token similarity.")
    detail = models.TextField(blank=True)
    publication_types = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    retracted = models.BooleanField(null=True, help_text="PubMed marks the article retracted (None: not checked).")
    expression_of_concern = models.BooleanField(null=True, help_text="PubMed links an expression of concern.")
    notices = models.JSONField(
        default=list,
        blank=True,
        help_text='Retraction, erratum and concern links: [{"type", "pmid", "source", "note"}].',
    )

    class Meta:
        ordering = ["-checked_at"]
        get_latest_by = "checked_at"

    def __str__(self) -> str:
        return f"{self.study} - {self.get_status_display()}"
