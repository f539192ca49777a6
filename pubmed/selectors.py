"""Reads of the pubmed store: abstracts by PMID, ingestion jobs, Tablizer rows."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import numpy as np
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.db.models import QuerySet

from config.inputs import parse_ascii_int
from evidence.levels import LEVEL_RANK
from evidence.screening import remember_screened
from pubmed.abbreviations import MAX_TERMS, Definition, best_definition
from pubmed.embeddings import get_embedder
from pubmed.models import Abstract, AbstractChunk, Ingestion, TablizerSnapshot
from pubmed.vectors import vector_literal


def retracted_among(*, pmids: Sequence[str]) -> dict[str, str]:
    """Return {PMID: title} of the stored abstracts among `pmids` that PubMed marks retracted."""
    if not pmids:
        return {}
    return dict(Abstract.objects.filter(pmid__in=list(pmids), is_retracted=True).values_list("pmid", "title"))


TABLIZER_SORTS = {
    "relevance": None,
    "pmid": lambda a: int(a.pmid),
    "title": lambda a: a.title.lower(),
    "author": lambda a: a.first_author.lower(),
    "journal": lambda a: a.journal.lower(),
    "year": lambda a: a.year or 0,
    "type": lambda a: (a.publication_types[0] if a.publication_types else "").lower(),
    # Strongest level first when ascending: guideline, systematic review, RCT, ... other.
    "level": lambda a: (-LEVEL_RANK.get(a.evidence_level, 0), a.evidence_level_inferred),
}


def abstract_get(*, pmid: str) -> Abstract | None:
    return Abstract.objects.filter(pmid=pmid).first()


def abstracts_by_pmids(*, pmids: Sequence[str]) -> list[Abstract]:
    """Return stored abstracts for `pmids`, in the order given; unknown PMIDs are skipped."""
    found = Abstract.objects.in_bulk(list(pmids))
    return [found[pmid] for pmid in pmids if pmid in found]


def ingestion_get(*, ingestion_id: UUID | str, user: User | AnonymousUser | None = None) -> Ingestion | None:
    """Return the ingestion if `user` may see it (its creator or staff); None otherwise."""
    queryset = Ingestion.objects.all()
    if user is not None and not user.is_staff:
        if not isinstance(user, User):
            return None  # an anonymous visitor created no ingestion
        queryset = queryset.filter(created_by=user)
    return queryset.filter(pk=ingestion_id).first()


def sort_abstracts(rows: Sequence[Abstract], *, sort: str, descending: bool) -> list[Abstract]:
    """Sort Tablizer rows by a column; 'relevance' keeps PubMed's order."""
    key = TABLIZER_SORTS.get(sort)
    if key is None:
        return list(reversed(rows)) if descending else list(rows)
    return sorted(rows, key=key, reverse=descending)


def filter_abstracts_by_level(rows: Sequence[Abstract], *, levels: Sequence[str]) -> list[Abstract]:
    """Return the rows whose level of evidence is one of `levels` (all rows when none is given), order kept."""
    if not levels:
        return list(rows)
    wanted = set(levels)
    return [row for row in rows if row.evidence_level in wanted]


def snapshots_for_user(*, user: User | AnonymousUser) -> QuerySet[TablizerSnapshot]:
    """Return the user's Tablizer snapshots, newest first (none for anonymous visitors)."""
    if not isinstance(user, User):
        return TablizerSnapshot.objects.none()
    return TablizerSnapshot.objects.filter(user=user).order_by("-created_at", "-id")


def snapshot_get(*, user: User | AnonymousUser, snapshot_id: str | int) -> TablizerSnapshot | None:
    """Return the user's snapshot `snapshot_id`, or None (also for another user's snapshot)."""
    number = parse_ascii_int(str(snapshot_id))
    return snapshots_for_user(user=user).filter(pk=number).first() if number is not None else None


def word_document_frequencies(words: Sequence[str]) -> tuple[dict[str, int], int]:
    """Return how many stored chunks contain each word (by its English full-text lexeme) and the chunk total.

    One query over the `LexemeStat` table the store keeps up to date, instead of a full-text count
    per word; a word with no lexeme (a stop word) counts 0. Returns ({}, 0) before the first count.
    """
    unique = list(dict.fromkeys(words))
    with connection.cursor() as cursor:
        cursor.execute("SELECT ndoc FROM pubmed_lexemestat WHERE lexeme = ''")
        row = cursor.fetchone()
        if not row or not row[0] or not unique:
            return {}, 0
        cursor.execute(
            "SELECT w.word, COALESCE(max(s.ndoc), 0) FROM unnest(%s::text[]) AS w(word) "
            "LEFT JOIN LATERAL unnest(to_tsvector('english', w.word)) AS t(lexeme, positions, weights) ON true "
            "LEFT JOIN pubmed_lexemestat s ON s.lexeme = t.lexeme AND s.lexeme <> '' "
            "GROUP BY w.word",
            [unique],
        )
        return {word: int(ndoc) for word, ndoc in cursor.fetchall()}, int(row[0])


# Chunks read per piece of shorthand for its definition: enough for a second sense to show, and a bound on the work
# for shorthand that thousands of stored abstracts use.
SHORTHAND_CHUNKS = 60


def shorthand_definitions(*, terms: Sequence[str], question: str) -> list[Definition]:
    """Return what the stored abstracts define each of `terms` (shorthand of `question`) as, where any does.

    One query for all terms (at most `MAX_TERMS`): per term, the chunks whose full-text vector holds it and whose
    text writes it after a parenthesis, from abstracts not flagged for instructions to an AI.
    """
    asked = list(terms[:MAX_TERMS])
    if not asked:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.term, c.abstract_id, c.text FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, place) "
            "CROSS JOIN LATERAL (SELECT c.abstract_id, c.text FROM pubmed_abstractchunk c "
            "JOIN pubmed_abstract a ON a.pmid = c.abstract_id "
            "WHERE c.search_vector @@ plainto_tsquery('english', t.term) AND strpos(c.text, '(' || t.term) > 0 "
            "AND NOT a.has_instructions LIMIT %s) c ORDER BY t.place",
            [asked, SHORTHAND_CHUNKS],
        )
        rows = cursor.fetchall()
    chunks: dict[str, dict[str, list[str]]] = {term: {} for term in asked}
    for term, pmid, text in rows:
        chunks[term].setdefault(pmid, []).append(text)
    found = [best_definition(term, [" ".join(texts) for texts in chunks[term].values()], question) for term in asked]
    return [definition for definition in found if definition is not None]


def chunk_similarities(*, vector: np.ndarray, pmids: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
    """Return, for each stored abstract in `pmids`, (chunk id, cosine similarity to `vector`) of every chunk.

    One query over the stored chunk embeddings of the current model; abstracts not embedded with
    it are absent from the result.
    """
    if not pmids:
        return {}
    spec = get_embedder().spec
    dimension = int(spec.dimension)
    literal = vector_literal(vector)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.abstract_id, c.ordinal, 1 - ((c.embedding::vector({dimension})) <=> %s::vector({dimension})) "
            f"FROM pubmed_abstractchunk c WHERE c.abstract_id = ANY(%s) AND c.embedding_dim = {dimension} "
            "AND c.embedding_model = %s ORDER BY c.abstract_id, c.ordinal",
            [literal, list(pmids), spec.name],
        )
        rows = cursor.fetchall()
    found: dict[str, list[tuple[str, float]]] = {}
    for pmid, ordinal, similarity in rows:
        found.setdefault(pmid, []).append((f"c{ordinal}", float(similarity)))
    return found


def chunks_stored() -> bool:
    """Return True when any abstract chunk is stored (an empty store needs no embedding model to search)."""
    return AbstractChunk.objects.exists()


def chunks_of(*, pmids: Sequence[str]) -> dict[str, list[AbstractChunk]]:
    """Return each abstract's stored chunks (ordinal, section and text), in order, by PMID.

    A chunk the store screened and found free of instructions is remembered as such (`remember_screened`).
    """
    found: dict[str, list[AbstractChunk]] = {}
    for chunk in AbstractChunk.objects.filter(abstract_id__in=list(pmids)).only(
        "abstract_id", "ordinal", "section", "title", "text", "instructions_screened_by"
    ).order_by("abstract_id", "ordinal"):
        remember_screened((chunk.title, chunk.text), chunk.instructions_screened_by)
        found.setdefault(chunk.abstract_id, []).append(chunk)
    return found


def mesh_terms_by_pmid(*, pmids: Sequence[str]) -> dict[str, list[str]]:
    """Return the MeSH terms of each stored abstract, by PMID."""
    return dict(Abstract.objects.filter(pmid__in=list(pmids)).values_list("pmid", "mesh_terms"))

