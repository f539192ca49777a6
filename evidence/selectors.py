"""Read-side queries over the evidence library."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import F, Func, Prefetch, Q, QuerySet, TextField, Value

from evidence.findings import curated_findings
from evidence.models import Abbreviation, AnchorScenario, Finding, ResultContext, Study
from evidence.screening import without_instructions
from evidence.table_digest import ReadPerChange, table_digests

VERIFIED_REFERENCES_LIMIT = 8


def normalize_tags(tags: Iterable[str]) -> list[str]:
    """Return tags lower-cased, stripped and de-duplicated in their original order."""
    seen: dict[str, None] = {}
    for tag in tags:
        cleaned = tag.strip().lower()
        if cleaned:
            seen.setdefault(cleaned, None)
    return list(seen)


def studies_for_tags(
    *, tags: Iterable[str], context: str | None = None, limit: int = VERIFIED_REFERENCES_LIMIT
) -> list[Study]:
    """Return library studies sharing a disease tag with `tags`, strongest then newest first.

    With a `context` (positive / negative / monitoring), only studies whose result context
    matches it or is `both` are returned.
    """
    wanted = normalize_tags(tags)
    if not wanted:
        return []
    queryset = Study.objects.filter(disease_tags__overlap=wanted)
    if context:
        queryset = queryset.filter(result_context__in=[context, ResultContext.BOTH])
    return list(
        with_findings(queryset.select_related("guidance_item")).order_by(
            "-evidence_strength", "-publication_year", "study_name"
        )[:limit]
    )


def study_for_nct(*, nct_id: str) -> Study | None:
    """Return the library study registered under ClinicalTrials.gov number `nct_id`, or None."""
    nct_id = nct_id.strip()
    return Study.objects.filter(nct_number__iexact=nct_id).first() if nct_id else None


def _identifier_text(study: Study) -> str:
    parts = []
    if study.pmid:
        parts.append(f"PMID {study.pmid}")
    if study.doi:
        parts.append(f"DOI {study.doi}")
    if study.nct_number:
        parts.append(study.nct_number)
    return ", ".join(parts)


def verified_references_block(*, studies: Sequence[Study]) -> str:
    """Render studies as the VERIFIED REFERENCES prompt block: one line per study."""
    if not studies:
        return "VERIFIED REFERENCES: none in the curated library for this question."
    lines = ["VERIFIED REFERENCES (curated library; cite these identifiers exactly):"]
    for study in studies:
        year = study.publication_year or "n.d."
        finding = without_instructions(study.key_finding)
        lines.append(f"- {without_instructions(study.study_name)} ({_identifier_text(study)}; {year}): {finding}")
        # What the study found or recommends, graded, in the words an answer may quote.
        lines.extend(f"  - {without_instructions(curated.shown)}" for curated in curated_findings(study))
    return "\n".join(lines)


def study_search(
    *,
    text: str = "",
    tag: str = "",
    strength: int | None = None,
    kind: str = "",
    design: str = "",
    year: int | None = None,
    context: str = "",
) -> QuerySet[Study]:
    """Return studies matching the library page / API filters, strongest first.

    `text` matches names, aliases, identifiers (PMID, DOI, NCT) and, by full-text search,
    titles and key findings.
    """
    queryset = Study.objects.all()
    text = text.strip()
    if text:
        identifier = text.removeprefix("PMID:").strip()
        vector = SearchVector("title", "key_finding", "study_name", config="english")
        aliases_text = Func(F("aliases"), Value(" | "), function="array_to_string", output_field=TextField())
        queryset = queryset.annotate(_search=vector, _aliases=aliases_text).filter(
            Q(study_name__icontains=text)
            | Q(_aliases__icontains=text)
            | Q(pmid=identifier)
            | Q(doi__iexact=identifier)
            | Q(nct_number__iexact=identifier)
            | Q(title__icontains=text)
            | Q(_search=SearchQuery(text, config="english", search_type="websearch"))
        )
    if tag:
        queryset = queryset.filter(Q(disease_tags__contains=[tag.lower()]) | Q(decision_tags__contains=[tag.lower()]))
    if strength:
        queryset = queryset.filter(evidence_strength=strength)
    if kind:
        queryset = queryset.filter(kind=kind)
    if design:
        queryset = queryset.filter(study_design__icontains=design)
    if year:
        queryset = queryset.filter(publication_year=year)
    if context:
        queryset = queryset.filter(result_context__in=[context, ResultContext.BOTH])
    return queryset.order_by("-evidence_strength", "-publication_year", "study_name")


def library_tag_names() -> list[tuple[str, str]]:
    """Return (code, display name) of every disease tag used in the library, sorted by name (one query)."""
    from evidence.models import Tag
    from evidence.tag_names import tag_label

    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT used.tag, tag.label FROM (SELECT unnest(disease_tags) AS tag FROM {Study._meta.db_table})"
            f" AS used LEFT JOIN {Tag._meta.db_table} AS tag ON tag.code = used.tag"
        )
        names = [(code, tag_label(code, {code: label} if label else {})) for code, label in cursor.fetchall()]
    return sorted(names, key=lambda pair: pair[1].lower())


def library_tags() -> list[str]:
    """Return every disease tag used in the library, sorted."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT unnest(disease_tags) AS tag FROM {Study._meta.db_table} ORDER BY tag")
        return [row[0] for row in cursor.fetchall()]


def studies_found_retracted(*, studies: Iterable[Study]) -> set[int]:
    """Return the pks of `studies` whose latest PubMed identifier check found them retracted."""
    from evidence.models import IdentifierCheck

    pks = [study.pk for study in studies]
    if not pks:
        return set()
    latest = (
        IdentifierCheck.objects.filter(study_id__in=pks)
        .order_by("study_id", "-checked_at", "-pk")
        .distinct("study_id")
        .values_list("study_id", "retracted")
    )
    return {study_id for study_id, retracted in latest if retracted}


def with_findings(queryset: QuerySet[Study]) -> QuerySet[Study]:
    """Return `queryset` with each study's curated findings (and their reviewers) fetched in two more queries."""
    return queryset.prefetch_related(Prefetch("findings", queryset=Finding.objects.select_related("reviewed_by")))


def library_studies() -> list[Study]:
    """Return every study of the curated library (what a question's vocabulary and names are read against).

    The studies loaded for one question serve the next while no study or finding has been added, changed
    or deleted since (the tables' digest, one small query: `table_digest`): loading the whole library with
    its findings on every question was a tenth of an answer's CPU. Callers only read them.
    """
    digest = table_digests(Study._meta.db_table, Finding._meta.db_table)
    return list(_LIBRARY.get(digest, lambda: tuple(with_findings(Study.objects.all()))))


_LIBRARY: ReadPerChange[tuple[Study, ...]] = ReadPerChange()  # the library last read, by its tables' digest


def scenario_anchor_studies(*, scenario: str) -> list[Study]:
    """Return the anchor studies of anchor scenario `scenario` (its key), strongest and newest first."""
    if not scenario:
        return []
    return list(
        with_findings(Study.objects.filter(anchor_scenarios__contains=[scenario])).order_by(
            "-evidence_strength", "-publication_year", "study_name"
        )
    )


def scenario_title(*, scenario: str) -> str:
    """Return the anchor scenario's title for readers, or its key when no such scenario is stored."""
    if not scenario:
        return ""
    return AnchorScenario.objects.filter(key=scenario).values_list("title", flat=True).first() or scenario


def abbreviation_terms() -> list[str]:
    """Return every curated abbreviation and lay term (never taken for an unverified study name)."""
    return list(Abbreviation.objects.values_list("term", flat=True))

