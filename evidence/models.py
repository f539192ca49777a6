"""The curated evidence library: landmark studies and guidelines, and what they support."""

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


def _tags() -> ArrayField:
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


class GuidanceItem(models.Model):
    """A piece of clinical guidance (what to do), which one or more library studies support."""

    title = models.CharField(max_length=200, unique=True)
    statement = models.TextField(help_text="The guidance in one or two sentences, in our own words.")
    disease_tags = _tags()
    decision_tags = _tags()
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
    aliases = _tags()
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
    disease_tags = _tags()
    decision_tags = _tags()
    anchor_scenarios = _tags()
    result_context = models.CharField(max_length=16, choices=ResultContext, default=ResultContext.BOTH)
    clinical_settings = _tags()
    test_names = _tags()
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
    def identifier_map(self) -> dict[str, str]:
        """Return the study's identifiers that are set, keyed pmid / doi / nct / pmcid."""
        found = {"pmid": self.pmid, "doi": self.doi, "nct": self.nct_number, "pmcid": self.pmcid}
        return {kind: value for kind, value in found.items() if value}

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


class TagKind(models.TextChoices):
    DISEASE = "disease", "Disease"
    DECISION = "decision", "Decision"


class Tag(models.Model):
    """A term of the tag vocabulary: a disease or a clinical decision, with its synonyms and MeSH mappings.

    The vocabulary is data: curators extend it in admin and every part of the pipeline (PICO
    extraction, classification, ranking, decision aids) picks the change up without a code change.
    """

    code = models.SlugField(max_length=64, unique=True, help_text="Lower-case code used in tags, e.g. af, ckd.")
    kind = models.CharField(max_length=10, choices=TagKind)
    label = models.CharField(max_length=120, help_text="Human-readable name, e.g. atrial fibrillation.")
    synonyms = ArrayField(
        models.CharField(max_length=120),
        default=list,
        blank=True,
        help_text="Words and phrases that mean this tag in a question (matched at word boundaries).",
    )
    mesh_terms = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    broader = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="narrower",
        help_text="The broader tag (hfpef → heart_failure), used to relax the ranking.",
    )
    is_imaging_term = models.BooleanField(
        default=False, help_text="Decision tags only: the question asks for an image, ECG or scan."
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["kind", "code"]

    def __str__(self) -> str:
        return f"{self.code} ({self.get_kind_display().lower()})"

    def clean(self) -> None:
        self.code = self.code.strip().lower()
        self.synonyms = [synonym.strip() for synonym in self.synonyms if synonym.strip()]


class AnchorScenario(models.Model):
    """A common clinical scenario with its anchor pack: the guidelines and landmark trials to cite."""

    key = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    disease_tags = _tags()
    decision_tags = _tags()
    history = HistoricalRecords()

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.title

    def anchor_studies(self) -> models.QuerySet[Study]:
        return Study.objects.filter(anchor_scenarios__contains=[self.key]).order_by(
            "-evidence_strength", "-publication_year"
        )


class ClassificationRule(models.Model):
    """Tags → classification: which MeSH terms to keep or exclude and which anchor scenario applies.

    A rule matches when the question carries every one of its disease tags and (if it lists any)
    at least one of its decision tags. The highest priority match wins.
    """

    name = models.CharField(max_length=120, unique=True)
    classification = models.CharField(max_length=120, help_text="e.g. Anticoagulation in AF with CKD")
    disease_tags = _tags()
    decision_tags = _tags()
    allowed_mesh = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    excluded_mesh = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    anchor_scenario = models.ForeignKey(
        AnchorScenario, null=True, blank=True, on_delete=models.SET_NULL, related_name="rules"
    )
    priority = models.PositiveSmallIntegerField(default=100, help_text="Higher wins when several rules match.")
    history = HistoricalRecords()

    class Meta:
        ordering = ["-priority", "name"]

    def __str__(self) -> str:
        return self.name


def _validate_image(upload: Any) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(upload) as image:
            image.verify()
    except (UnidentifiedImageError, OSError) as exc:
        raise ValidationError("Upload a PNG, JPEG, GIF or WebP image (this file is not one).") from exc
    finally:
        upload.seek(0)


class DecisionAid(models.Model):
    """A curated image (algorithm, flowchart) shown beside answers whose disease and decision tags match."""

    title = models.CharField(max_length=200)
    image = models.ImageField(upload_to="decision_aids/", validators=[_validate_image])
    alt_text = models.CharField(max_length=300, help_text="What the image shows, for screen readers.")
    caption = models.TextField(blank=True)
    source = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="decision_aids",
        help_text="The guideline or study the image comes from.",
    )
    source_url = models.URLField(blank=True)
    disease_tags = _tags()
    decision_tags = _tags()
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        if not self.disease_tags or not self.decision_tags:
            raise ValidationError(
                "A decision aid needs at least one disease tag and one decision tag: it is shown only when both match."
            )


class Abbreviation(models.Model):
    """A clinical abbreviation, lay word or spelling variant and the terms it stands for.

    Question understanding and evidence judgement read a question's "NAC" as N-acetylcysteine,
    "elderly" as aged / geriatric and "heart attack" as myocardial infarction, so an abstract that
    uses the other wording still counts as addressing the question. Curators extend the list in
    admin; the answer pipeline picks up a change with the next question.
    """

    term = models.CharField(
        max_length=60,
        unique=True,
        help_text="As a clinician writes it: an abbreviation (NAC), a lay word (heart attack).",
    )
    expansions = ArrayField(
        models.CharField(max_length=120),
        help_text="What the term stands for, each as the literature writes it (N-acetylcysteine, acetylcysteine).",
    )
    case_sensitive = models.BooleanField(
        default=False,
        help_text="Match only as written (capitals): for abbreviations that are also ordinary words (CAP, MS, ALL).",
    )
    history = HistoricalRecords()

    class Meta:
        ordering = ["term"]

    def __str__(self) -> str:
        return f"{self.term} → {', '.join(self.expansions)}"

    def clean(self) -> None:
        self.term = " ".join(self.term.split())
        self.expansions = [" ".join(value.split()) for value in self.expansions if value.strip()]
        if not self.term:
            raise ValidationError({"term": "Give the abbreviation or lay word, e.g. NAC."})
        if not self.expansions:
            raise ValidationError({"expansions": f"Say what {self.term!r} stands for: at least one expansion."})
