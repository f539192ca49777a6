"""The PubMed abstract store: abstracts, their embedded chunks, searches, caches and ingestion jobs."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils import timezone
from pgvector.django import VectorField

from evidence import identifiers
from evidence.levels import EvidenceLevel, LevelAssessment, level_assessment


def _strings(max_length: int = 300) -> ArrayField:
    return ArrayField(models.CharField(max_length=max_length), default=list, blank=True)


class AbstractSource(models.TextChoices):
    EFETCH = "efetch", "NCBI efetch"
    XML_FILE = "xml", "PubMed XML file"
    MEDLINE_FILE = "medline", "MEDLINE text file"
    JSONL_FILE = "jsonl", "JSONL file"


class Abstract(models.Model):
    """One PubMed record; its chunks are what search retrieves and answers cite."""

    pmid = models.CharField("PMID", max_length=12, primary_key=True, validators=[identifiers.validate_pmid])
    title = models.TextField()
    abstract = models.TextField(blank=True, help_text="Plain text; structured sections as 'LABEL: text' paragraphs.")
    sections = models.JSONField(default=list, blank=True, help_text='[{"label", "text", "category"}]')
    authors = _strings()
    journal = models.CharField(max_length=300, blank=True, help_text="ISO abbreviation, e.g. N Engl J Med.")
    journal_title = models.CharField(max_length=500, blank=True)
    pub_date = models.DateField(null=True, blank=True, help_text="First day of the publication date.")
    pub_date_raw = models.CharField(max_length=100, blank=True, help_text="As PubMed gives it, e.g. 1998 Dec-1999 Jan.")
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    mesh_terms = _strings(200)
    mesh_major = _strings(200)
    mesh_headings = models.JSONField(default=list, blank=True, help_text='[{"descriptor", "major", "qualifiers"}]')
    publication_types = _strings(200)
    keywords = _strings()
    doi = models.CharField("DOI", max_length=200, blank=True)
    pmcid = models.CharField("PMC id", max_length=16, blank=True)
    is_book = models.BooleanField(default=False)
    corrections = models.JSONField(
        default=list, blank=True,
        help_text='Retraction, erratum and expression-of-concern links: [{"type", "pmid", "source", "note"}].',
    )
    is_retracted = models.BooleanField(
        "retracted", default=False, help_text="PubMed marks it retracted; it never supports an answer.")
    has_expression_of_concern = models.BooleanField("expression of concern", default=False)
    has_instructions = models.BooleanField(
        "instructions to an AI", default=False,
        help_text="The title or abstract holds sentences addressed to an AI; they are never quoted or shown to "
        "a model. Check the record against PubMed.",
    )
    instruction_sentences = ArrayField(
        models.TextField(), default=list, blank=True,
        help_text="The sentences that read as instructions to an AI (evidence.injection), as stored.",
    )
    evidence_level = models.CharField(
        max_length=20, choices=EvidenceLevel.choices, default=EvidenceLevel.OTHER,
        help_text="From publication types and design MeSH headings, else inferred from the title and abstract.",
    )
    evidence_level_inferred = models.BooleanField(
        default=False, help_text="The level was guessed from design words: PubMed did not state it."
    )
    source = models.CharField(max_length=16, choices=AbstractSource.choices, default=AbstractSource.EFETCH)
    content_hash = models.CharField(
        max_length=64, help_text="sha256 of title and abstract; unchanged text is not re-embedded."
    )
    fetched_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-year", "-pmid"]
        indexes = [
            GinIndex(fields=["mesh_terms"], name="abstract_mesh_terms_gin"),
            models.Index(fields=["year"], name="abstract_year_idx"),
            models.Index(fields=["pmid"], condition=models.Q(is_retracted=True), name="abstract_retracted_idx"),
        ]

    def __str__(self) -> str:
        return f"PMID {self.pmid}: {self.title[:80]}"

    @property
    def level(self) -> LevelAssessment:
        return level_assessment(self.evidence_level, inferred=self.evidence_level_inferred)

    @property
    def retraction_notices(self) -> list[dict[str, str]]:
        """Return the links to this record's retraction notices (RetractionIn)."""
        return [link for link in self.corrections if link.get("type") == "RetractionIn"]

    @property
    def concern_notices(self) -> list[dict[str, str]]:
        return [link for link in self.corrections if link.get("type") == "ExpressionOfConcernIn"]

    @property
    def doc_id(self) -> str:
        return f"pmid:{self.pmid}"

    @property
    def pubmed_url(self) -> str:
        return identifiers.pubmed_url(self.pmid)

    @property
    def first_author(self) -> str:
        return self.authors[0] if self.authors else ""


class AbstractChunk(models.Model):
    """A sentence-aligned passage of an abstract: the unit of retrieval and of citation.

    The vector column has no fixed dimension so that `EMBEDDING_MODEL` can change without a
    schema change; HNSW indexes are partial expression indexes per dimension
    (`(embedding::vector(384)) vector_cosine_ops WHERE embedding_dim = 384`), see
    `pubmed.vectors.vector_index_ensure`.
    """

    abstract = models.ForeignKey(Abstract, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveSmallIntegerField()
    section = models.CharField(max_length=200, blank=True)
    title = models.TextField(help_text="The abstract's title, repeated so full-text search can weight it.")
    text = models.TextField()
    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=300, blank=True)
    embedding_dim = models.PositiveSmallIntegerField(null=True, blank=True)
    instructions_screened_by = models.CharField(max_length=32, blank=True, default="", help_text=(
        "The screening (evidence.screening.screening_version) that found title and text free of instructions."))
    search_vector = models.GeneratedField(
        expression=SearchVector("title", weight="A", config="english")
        + SearchVector("text", weight="B", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        ordering = ["abstract_id", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["abstract", "ordinal"], name="chunk_unique_ordinal")]
        indexes = [
            GinIndex(fields=["search_vector"], name="chunk_search_vector_gin"),
            models.Index(fields=["embedding_model", "embedding_dim"], name="chunk_embedding_model_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.doc_id}:{self.chunk_id}"

    @property
    def chunk_id(self) -> str:
        return chunk_id_for(self.ordinal)

    @property
    def doc_id(self) -> str:
        return f"pmid:{self.abstract_id}"


def chunk_id_for(ordinal: int) -> str:
    """Return the citation chunk id of the chunk at `ordinal` (`c0`, `c1`, ...)."""
    return f"c{ordinal}"


class SearchQuery(models.Model):
    """The PubMed query used for a drug/disease pair and the PMIDs it found (one row per pair)."""

    drug = models.CharField(max_length=200)
    disease = models.CharField(max_length=200)
    pubmed_query = models.TextField(help_text="The PubMed queries run, one per line.")
    pmids = _strings(12)
    searched_at = models.DateTimeField(default=timezone.now, help_text="When the pair was last searched.")
    created_at = models.DateTimeField(default=timezone.now, help_text="When the pair was first searched.")

    class Meta:
        db_table = "search_queries"
        ordering = ["-searched_at"]
        constraints = [models.UniqueConstraint(fields=["drug", "disease"], name="search_query_unique_pair")]
        verbose_name_plural = "search queries"

    def __str__(self) -> str:
        return f"{self.drug} / {self.disease}"


class ScoutCacheKind(models.TextChoices):
    COUNT = "count", "PubMed count"
    NORMALISATION = "normalisation", "Disease normalisation"
    EXPANSION = "expansion", "Query expansion"


class ScoutCacheEntry(models.Model):
    """A stored answer of an Evidence Scout stage (a PubMed count, a normalised disease, an expansion).

    Kept in the database so every web process and worker shares it; entries expire after
    `SCOUT_CACHE_SECONDS` (five days by default).
    """

    kind = models.CharField(max_length=16, choices=ScoutCacheKind.choices)
    key = models.CharField(max_length=64, help_text="sha256 of the normalised input.")
    label = models.CharField(max_length=300, help_text="The input in words, for the admin.")
    value = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["kind", "key"], name="scout_cache_unique_key")]
        verbose_name = "scout cache entry"
        verbose_name_plural = "scout cache entries"

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.label[:60]}"


class EsearchCacheEntry(models.Model):
    """A cached esearch answer; repeated searches within the TTL cost no NCBI request."""

    key = models.CharField(max_length=64, unique=True, help_text="sha256 of the normalised request.")
    term = models.TextField()
    params = models.JSONField(default=dict)
    count = models.PositiveIntegerField()
    pmids = _strings(12)
    query_translation = models.TextField(blank=True)
    fetched_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-fetched_at"]
        verbose_name = "esearch cache entry"
        verbose_name_plural = "esearch cache entries"

    def __str__(self) -> str:
        return f"{self.term[:60]} ({self.count})"


class NcbiRequestSlot(models.Model):
    """One NCBI request sent within the current rate-limit window of its budget.

    The shared NCBI budget when no Redis is configured (or Redis is down): `pubmed.ratelimit`
    inserts a row per request, stamped with the database clock, and deletes rows once they leave
    the window, so the table never holds more than a few rows per budget.
    """

    budget = models.CharField(max_length=64, help_text="Which NCBI budget: one per API key, or anonymous.")
    sent_at = models.DateTimeField(help_text="The database clock when the slot was taken.")

    class Meta:
        indexes = [models.Index(fields=["budget", "sent_at"], name="ncbi_slot_budget_sent_idx")]

    def __str__(self) -> str:
        return f"{self.budget} at {self.sent_at:%H:%M:%S.%f}"


class IngestionStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    PARTIAL = "partial", "Partly failed"
    FAILED = "failed", "Failed"


class Ingestion(models.Model):
    """One fetch-and-cache job: its queries, progress counts, errors and timings."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    queries = ArrayField(models.TextField(), default=list)
    max_per_query = models.PositiveIntegerField(default=20)
    status = models.CharField(max_length=16, choices=IngestionStatus.choices, default=IngestionStatus.PENDING)
    found = models.PositiveIntegerField(default=0, help_text="Distinct PMIDs the queries returned.")
    new = models.PositiveIntegerField(default=0, help_text="PMIDs not stored before, fetched and stored.")
    embedded = models.PositiveIntegerField(default=0, help_text="Chunks embedded.")
    failed = models.PositiveIntegerField(default=0, help_text="PMIDs that could not be fetched or stored.")
    to_fetch = models.PositiveIntegerField(default=0)
    fetched = models.PositiveIntegerField(default=0)
    pmids = _strings(12)
    errors = models.JSONField(default=list, blank=True)
    timings = models.JSONField(default=dict, blank=True, help_text="Seconds per stage.")
    task_id = models.CharField(max_length=100, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Ingestion {self.id} ({self.status})"

    @property
    def progress(self) -> float:
        """Fraction done in [0, 1]: 1 once finished, else the share of PMIDs fetched."""
        if self.status in {IngestionStatus.SUCCEEDED, IngestionStatus.PARTIAL, IngestionStatus.FAILED}:
            return 1.0
        if not self.to_fetch:
            return 0.0
        return min(self.fetched / self.to_fetch, 1.0)


class LexemeStat(models.Model):
    """How many chunks contain a full-text lexeme; the row with lexeme '' holds the chunk total.

    Refreshed from `ts_stat` as the store grows (see `pubmed.services.lexemes.lexeme_stats_refresh`);
    full-text search uses it to leave words that occur almost everywhere out of its candidate set.
    """

    lexeme = models.CharField(max_length=255, primary_key=True)
    ndoc = models.PositiveIntegerField()

    class Meta:
        verbose_name = "full-text lexeme statistic"

    def __str__(self) -> str:
        return f"{self.lexeme or '(total)'}: {self.ndoc}"


class TablizerSnapshot(models.Model):
    """A saved Tablizer search: its query, date range, PubMed's count and the PMIDs the page had loaded."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tablizer_snapshots")
    label = models.CharField(max_length=120)
    query = models.TextField()
    year_from = models.PositiveSmallIntegerField(null=True, blank=True)
    year_to = models.PositiveSmallIntegerField(null=True, blank=True)
    count = models.PositiveIntegerField(help_text="Articles PubMed matched when the snapshot was saved.")
    pmids = _strings(12)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"], name="tablizer_snapshot_user_idx")]

    def __str__(self) -> str:
        return f"{self.label} ({self.query})"

    @property
    def date_range(self) -> str:
        if self.year_from and self.year_to:
            return f"{self.year_from}-{self.year_to}"
        if self.year_from:
            return f"{self.year_from} onwards"
        if self.year_to:
            return f"up to {self.year_to}"
        return ""


class RecordFileLoadStatus(models.TextChoices):
    RUNNING = "running", "Running or interrupted"
    FAILED = "failed", "Failed"
    FINISHED = "finished", "Finished"


class RecordFileLoad(models.Model):
    """How far the load of one record file (e.g. a PubMed baseline file) got: its resume point and counts.

    Keyed by the file's content (sha256), so a renamed or copied file resumes too. `position` counts the
    file's entries (records and DeleteCitation elements) that are stored; a load that stopped - killed,
    crashed, or refused at a broken record - starts again after it. A finished file loaded again starts
    from the top (records already stored are unchanged and not embedded again).
    """

    sha256 = models.CharField(max_length=64, unique=True, help_text="sha256 of the file as it is on disk.")
    path = models.TextField(help_text="Where the file was last loaded from.")
    size = models.BigIntegerField(help_text="Bytes on disk (compressed, for .gz files).")
    kind = models.CharField(max_length=16, help_text="xml, medline or jsonl.")
    status = models.CharField(
        max_length=16, choices=RecordFileLoadStatus.choices, default=RecordFileLoadStatus.RUNNING
    )
    position = models.PositiveIntegerField(default=0, help_text="Entries of the file stored so far (resume point).")
    resumed_after = models.PositiveIntegerField(
        default=0, help_text="The entry the latest run resumed after (0: it started at the first record)."
    )
    records = models.PositiveIntegerField(default=0, help_text="Records upserted.")
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    embedded = models.PositiveIntegerField(default=0, help_text="Chunks embedded.")
    deletions_listed = models.PositiveIntegerField(
        default=0, help_text="PMIDs the file's DeleteCitation elements list."
    )
    deleted = models.PositiveIntegerField(
        default=0, help_text="Stored abstracts removed because the file deletes them."
    )
    error = models.TextField(blank=True)
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid of the process that loaded it last.")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.path} ({self.status}, {self.position:,} entries)"
