"""Retrieve abstract chunks: vector (pgvector HNSW, cosine), full-text (PostgreSQL), and their fusion.

Hybrid search ranks chunks both ways, collapses each ranking to abstracts (an abstract's score is
that of its best chunk), fuses the two abstract rankings and returns each abstract's best chunk.
The top `RERANK_DEPTH` are then reranked down to k by `pubmed.services.rerank.rerank_hits` without an
LLM: the local cross-encoder when `RERANKER_MODEL` is set, else the model-free lexical reranker.

Fusion is a convex combination of per-query min-max-normalised scores (`VECTOR_WEIGHT` for cosine
similarity, the rest for ts_rank); weighted reciprocal rank fusion is kept as `fuse_rankings`.
On PubMedQA (benchmarks/retrieval.py, table in benchmarks/README.md) it was at least as good as
either single method at every cut-off, where plain RRF (k=60, equal weights) lost to vector search.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from django.db import connection, transaction

from evidence.screening import remember_screened
from pubmed.embeddings import embed_cached, get_embedder
from pubmed.services.rerank import rerank_hits
from pubmed.vectors import vector_literal

CANDIDATES = 60  # chunks taken from each ranking before fusion
VECTOR_WEIGHT = 0.7  # share of the normalised cosine similarity in the fused score
RRF_K = 20
RERANK_DEPTH = 20
HNSW_EF_SEARCH = 200  # 100 lost 1-2.5 points of hybrid Recall@10 at 100k-1M abstracts (benchmarks/README.md)
# Full-text candidates: chunks holding the query's rarest words (or pairs of them), about this
# many by estimate; never more than FTS_CANDIDATE_LIMIT are ranked, whatever the estimate said.
FTS_CANDIDATE_BUDGET = 1000
FTS_CANDIDATE_LIMIT = 4000  # 2,000 saved CPU at 1M but cost Recall@10 (benchmarks/README.md)
FTS_PAIR_LEXEMES = 6
# Hybrid search embeds its query here while PostgreSQL runs the full-text ranking (no database work in
# this thread, so it sees nothing a transaction would hide). The cache lets the answer pipeline reuse it.
_QUERY_EMBEDDING = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")
# The Evidence Scout's retrieval query for a drug/disease pair.
THERAPEUTIC_FRAMING = (
    "Evidence for {drug} as a treatment for {disease}, including clinical trials, efficacy data, "
    "and mechanism of action"
)


@dataclass(frozen=True)
class ChunkHit:
    pmid: str
    chunk_id: str
    doc_id: str
    text: str
    title: str
    journal: str
    year: int | None
    authors: list[str]
    doi: str
    pmcid: str
    publication_types: list[str]
    score: float
    section: str = ""
    mesh_terms: list[str] = field(default_factory=list)
    is_retracted: bool = False
    has_expression_of_concern: bool = False
    evidence_level: str = "other"
    evidence_level_inferred: bool = False


@dataclass(frozen=True)
class SearchFilters:
    mesh_include: tuple[str, ...] = ()
    mesh_exclude: tuple[str, ...] = ()
    pmids: tuple[str, ...] | None = None  # only these abstracts (None: all)
    year_from: int | None = None
    year_to: int | None = None
    levels: tuple[str, ...] = ()
    exclude_retracted: bool = False

    def sql(self) -> tuple[str, list[list[str] | int]]:
        """Return a SQL condition over abstract `a` and its parameters (case-insensitive MeSH match)."""
        clauses: list[str] = []
        params: list[list[str] | int] = []
        if self.mesh_include:
            clauses.append("EXISTS (SELECT 1 FROM unnest(a.mesh_terms) m WHERE lower(m) = ANY(%s))")
            params.append([term.lower() for term in self.mesh_include])
        if self.mesh_exclude:
            clauses.append("NOT EXISTS (SELECT 1 FROM unnest(a.mesh_terms) m WHERE lower(m) = ANY(%s))")
            params.append([term.lower() for term in self.mesh_exclude])
        if self.pmids is not None:
            clauses.append("a.pmid = ANY(%s)")
            params.append(list(self.pmids))
        if self.year_from is not None:
            clauses.append("a.year >= %s")
            params.append(self.year_from)
        if self.year_to is not None:
            clauses.append("a.year <= %s")
            params.append(self.year_to)
        if self.levels:
            clauses.append("a.evidence_level = ANY(%s)")
            params.append(list(self.levels))
        if self.exclude_retracted:
            clauses.append("NOT a.is_retracted")
        return (" AND ".join(clauses) or "TRUE"), params


def therapeutic_query(*, drug: str, disease: str) -> str:
    """Return the retrieval query for 'does {drug} treat {disease}' questions."""
    return THERAPEUTIC_FRAMING.format(drug=drug.strip(), disease=disease.strip())


def vector_ranking(
    *, query: str, limit: int, filters: SearchFilters | None = None, query_vector: np.ndarray | None = None
) -> list[tuple[int, str, float]]:
    """Return (chunk id, pmid, cosine similarity) of the nearest chunks, best first.

    `query_vector` is the query's embedding when the caller already has it.
    """
    embedder = get_embedder()
    dimension = int(embedder.spec.dimension)
    literal = vector_literal(embed_cached([query])[0] if query_vector is None else query_vector)
    condition, params = (filters or SearchFilters()).sql()
    # Join the abstracts only to filter: the plain query is a pure HNSW index scan.
    join = "JOIN pubmed_abstract a ON a.pmid = c.abstract_id" if condition != "TRUE" else ""
    sql = (
        f"SELECT c.id, c.abstract_id, (c.embedding::vector({dimension})) <=> %s::vector({dimension}) AS distance "
        f"FROM pubmed_abstractchunk c {join} "
        f"WHERE c.embedding_dim = {dimension} AND c.embedding_model = %s AND {condition} "
        f"ORDER BY (c.embedding::vector({dimension})) <=> %s::vector({dimension}) LIMIT %s"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, limit)}")
        # Filters drop candidates after the index scan; keep scanning until `limit` rows survive.
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(sql, [literal, embedder.spec.name, *params, literal, limit])
        rows = cursor.fetchall()
    rows.sort(key=lambda row: row[2])  # relaxed_order may return near-ties slightly out of order
    return [(chunk_id, pmid, 1.0 - float(distance)) for chunk_id, pmid, distance in rows]


def query_lexemes(query: str) -> tuple[list[tuple[str, float]], int]:
    """Return the query's full-text lexemes with the share of chunks containing each, and the chunk total.

    Shares come from `LexemeStat`; before its first refresh every share and the total are 0.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.lexeme, COALESCE(s.ndoc, 0), (SELECT ndoc FROM pubmed_lexemestat WHERE lexeme = '') "
            "FROM unnest(to_tsvector('english', %s)) AS t(lexeme, positions, weights) "
            "LEFT JOIN pubmed_lexemestat s ON s.lexeme = t.lexeme",
            [query],
        )
        rows = cursor.fetchall()
    total = int(rows[0][2] or 0) if rows else 0
    return [(lexeme, (ndoc / total) if total else 0.0) for lexeme, ndoc, _ in rows], total


def candidate_tsquery(lexemes: Sequence[tuple[str, float]], *, total: int) -> str:
    """Return the tsquery that picks full-text candidates: about FTS_CANDIDATE_BUDGET chunks, by estimate.

    `lexemes` are (lexeme, share of chunks). When the rarest lexeme's chunks fit the budget, the
    rarest lexemes are ORed while their estimated chunks (share * total, summed) stay in budget.
    When even the rarest is over budget (every query word is common in a large store), a candidate
    must hold at least two of the rarest lexemes: the pairs among the rarest m are ORed, m as large
    as the pairs' estimated chunks (shares multiplied, as if independent) allow, at most
    FTS_PAIR_LEXEMES; when even the two rarest together are over budget, the rarest k together, k as
    small as the estimate allows, so FTS_CANDIDATE_LIMIT stays a guard rather than the usual selector.
    A query of one lexeme gets that lexeme.
    """
    ordered = sorted(lexemes, key=lambda item: (item[1], item[0]))
    if not ordered:
        raise ValueError("A full-text query needs at least one lexeme.")
    if ordered[0][1] * total <= FTS_CANDIDATE_BUDGET or len(ordered) == 1:
        chosen: list[str] = []
        estimate = 0.0
        for lexeme, share in ordered:
            if chosen and estimate + share * total > FTS_CANDIDATE_BUDGET:
                break
            chosen.append(lexeme)
            estimate += share * total
        return " | ".join(_quoted(lexeme) for lexeme in chosen)
    if ordered[0][1] * ordered[1][1] * total > FTS_CANDIDATE_BUDGET:
        # Even the two rarest together are too common: the rarest k together, k as small as the budget allows.
        together = ordered[:2]
        estimate = ordered[0][1] * ordered[1][1] * total
        for lexeme, share in ordered[2:]:
            if estimate <= FTS_CANDIDATE_BUDGET:
                break
            together.append((lexeme, share))
            estimate *= share
        return " & ".join(_quoted(lexeme) for lexeme, _ in together)
    rarest = ordered[:2]
    for size in range(3, min(FTS_PAIR_LEXEMES, len(ordered)) + 1):
        pairs = sum(a * b for (_, a), (_, b) in combinations(ordered[:size], 2)) * total
        if pairs > FTS_CANDIDATE_BUDGET:
            break
        rarest = ordered[:size]
    return " | ".join(f"{_quoted(a)} & {_quoted(b)}" for (a, _), (b, _) in combinations(rarest, 2))


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''") + "'"


def text_ranking(*, query: str, limit: int, filters: SearchFilters | None = None) -> list[tuple[int, str, float]]:
    """Return (chunk id, pmid, ts_rank) of the best full-text matches, best first.

    Any query word may match (plain AND would find nothing for most questions), but only chunks
    picked by `candidate_tsquery` are ranked, at most FTS_CANDIDATE_LIMIT of them, so words found
    almost everywhere ("patients", "study") do not make every chunk a candidate and the work per
    query stays bounded as the store grows. All query words then count in ts_rank, title
    (weight A) matches above body (weight B) ones. When the limit binds, the ranked chunks are the
    first matches in table order, not the best ones.
    """
    lexemes, total = query_lexemes(query)
    if not lexemes:
        return []
    condition, params = (filters or SearchFilters()).sql()
    join = "JOIN pubmed_abstract a ON a.pmid = c.abstract_id" if condition != "TRUE" else ""
    # The LIMIT keeps the subquery apart, so ts_rank runs once per candidate as the scan reads it (a
    # materialised CTE of candidates copied every tsvector first: p95 25.7 against 21.4 ms at 1M).
    sql = (
        "SELECT id, abstract_id, rank FROM ("
        " SELECT c.id, c.abstract_id, ts_rank('{0.1, 0.2, 0.4, 1.0}', c.search_vector, %s::tsquery, 1) AS rank"
        f" FROM pubmed_abstractchunk c {join} WHERE c.search_vector @@ %s::tsquery AND {condition} LIMIT %s"
        ") AS candidate ORDER BY rank DESC, id LIMIT %s"
    )
    every_word = " | ".join(_quoted(lexeme) for lexeme, _ in lexemes)
    with transaction.atomic(), connection.cursor() as cursor:
        # The chunk table is read from memory, not disk: at the default random_page_cost (4) the
        # planner prefers a sequential scan that detoasts every tsvector over the GIN bitmap scan
        # (measured at 10k abstracts: 24 ms against 10 ms).
        cursor.execute("SET LOCAL random_page_cost = 1.1")
        cursor.execute(
            sql, [every_word, candidate_tsquery(lexemes, total=total), *params, FTS_CANDIDATE_LIMIT, limit]
        )
        rows = cursor.fetchall()
    return [(chunk_id, pmid, float(rank)) for chunk_id, pmid, rank in rows]


def _best_scores(ranking: list[tuple[int, str, float]]) -> list[tuple[str, int, float]]:
    """Collapse a chunk ranking into (pmid, best chunk id, best chunk score), best first."""
    seen: dict[str, tuple[int, float]] = {}
    for chunk_id, pmid, score in ranking:
        seen.setdefault(pmid, (chunk_id, score))
    return [(pmid, chunk_id, score) for pmid, (chunk_id, score) in seen.items()]


def fuse_scores(
    vector: list[tuple[str, int, float]], text: list[tuple[str, int, float]], *, vector_weight: float = VECTOR_WEIGHT
) -> list[tuple[str, int, float]]:
    """Fuse two abstract rankings by a convex combination of min-max-normalised scores, best first.

    An abstract missing from one ranking scores 0 there. Its chunk is the vector ranking's when it
    has one (the passage closest in meaning), else the full-text one.
    """

    def normalised(ranking: list[tuple[str, int, float]]) -> dict[str, float]:
        if not ranking:
            return {}
        values = [score for _, _, score in ranking]
        low, high = min(values), max(values)
        span = (high - low) or 1.0
        return {pmid: (score - low) / span if high > low else 1.0 for pmid, _, score in ranking}

    vector_norm, text_norm = normalised(vector), normalised(text)
    chunks = {pmid: chunk_id for pmid, chunk_id, _ in text}
    chunks.update({pmid: chunk_id for pmid, chunk_id, _ in vector})
    fused = {
        pmid: vector_weight * vector_norm.get(pmid, 0.0) + (1 - vector_weight) * text_norm.get(pmid, 0.0)
        for pmid in chunks
    }
    ordered = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    return [(pmid, chunks[pmid], score) for pmid, score in ordered]


def fuse_rankings(
    rankings: Sequence[tuple[list[tuple[str, int, float]], float]], *, k: int = RRF_K
) -> list[tuple[str, int, float]]:
    """Weighted reciprocal rank fusion of abstract rankings → (pmid, chunk id, fused score), best first.

    Each abstract keeps the chunk from the ranking in which it placed best.
    """
    scores: dict[str, float] = {}
    best_chunk: dict[str, tuple[int, int]] = {}  # pmid → (rank, chunk id)
    for ranking, weight in rankings:
        for rank, (pmid, chunk_id, _) in enumerate(ranking, start=1):
            scores[pmid] = scores.get(pmid, 0.0) + weight / (k + rank)
            if pmid not in best_chunk or rank < best_chunk[pmid][0]:
                best_chunk[pmid] = (rank, chunk_id)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(pmid, best_chunk[pmid][1], score) for pmid, score in ordered]


def _hits(scored: Sequence[tuple[str, int, float]]) -> list[ChunkHit]:
    """Load chunk and abstract fields for (pmid, chunk id, score) triples in one query, keeping order."""
    if not scored:
        return []
    ids = [chunk_id for _, chunk_id, _ in scored]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.ordinal, c.section, c.text, a.pmid, a.title, a.journal, a.year, a.authors, a.doi, "
            "a.pmcid, a.publication_types, a.mesh_terms, a.is_retracted, a.has_expression_of_concern, "
            "a.evidence_level, a.evidence_level_inferred, c.title, c.instructions_screened_by "
            "FROM pubmed_abstractchunk c JOIN pubmed_abstract a ON a.pmid = c.abstract_id WHERE c.id = ANY(%s)",
            [ids],
        )
        rows = {row[0]: row for row in cursor.fetchall()}
    hits = []
    for pmid, chunk_id, score in scored:
        row = rows.get(chunk_id)
        if row is None:  # deleted between ranking and loading
            continue
        _, ordinal, section, text, _, title, journal, year, authors, doi, pmcid, types, mesh, *flags = row
        retracted, concern, level, inferred, chunk_title, screened_by = flags
        # Screened when stored (the chunk's own title and text): answers need not read them again.
        remember_screened((chunk_title, text), screened_by)
        hits.append(
            ChunkHit(
                pmid=pmid,
                chunk_id=f"c{ordinal}",
                doc_id=f"pmid:{pmid}",
                text=text,
                title=title,
                journal=journal,
                year=year,
                authors=list(authors),
                doi=doi,
                pmcid=pmcid,
                publication_types=list(types),
                score=round(float(score), 6),
                section=section,
                mesh_terms=list(mesh),
                is_retracted=retracted,
                has_expression_of_concern=concern,
                evidence_level=level,
                evidence_level_inferred=inferred,
            )
        )
    return hits


def _check(query: str, k: int) -> str:
    query = " ".join(query.split())
    if not query:
        raise ValueError("The search query is empty.")
    if not 1 <= k <= 100:
        raise ValueError(f"k must be between 1 and 100, got {k}.")
    return query


def semantic_search(query: str, k: int = 10, *, filters: SearchFilters | None = None) -> list[ChunkHit]:
    """Return the k abstracts whose chunks are nearest to the query (best chunk each), by cosine."""
    query = _check(query, k)
    return _hits(_best_scores(vector_ranking(query=query, limit=max(CANDIDATES, k * 3), filters=filters))[:k])


def fulltext_search(query: str, k: int = 10, *, filters: SearchFilters | None = None) -> list[ChunkHit]:
    """Return the k abstracts whose chunks best match the query words (PostgreSQL full-text)."""
    query = _check(query, k)
    return _hits(_best_scores(text_ranking(query=query, limit=max(CANDIDATES, k * 3), filters=filters))[:k])


def hybrid_search(
    *,
    query: str,
    k: int = 10,
    mesh_include: Sequence[str] = (),
    mesh_exclude: Sequence[str] = (),
    year_from: int | None = None,
    year_to: int | None = None,
    rerank: bool = True,
    levels: Sequence[str] = (),
    exclude_retracted: bool = False,
) -> list[ChunkHit]:
    """Return the k best abstracts (each as its best chunk) by fused vector and full-text ranking.

    MeSH filters match whole descriptors, case-insensitively: an abstract qualifies when it has any
    included term and none of the excluded ones. Years are inclusive; `levels` keeps abstracts of
    those levels of evidence. Retracted abstracts are returned flagged unless `exclude_retracted`.
    """
    query = _check(query, k)
    if year_from is not None and year_to is not None and year_from > year_to:
        raise ValueError(f"year_from ({year_from}) is after year_to ({year_to}).")
    filters = SearchFilters(
        mesh_include=tuple(mesh_include), mesh_exclude=tuple(mesh_exclude), year_from=year_from, year_to=year_to,
        levels=tuple(levels), exclude_retracted=exclude_retracted,
    )
    depth = max(CANDIDATES, k * 3)
    embedding = _QUERY_EMBEDDING.submit(embed_cached, [query])  # overlaps the full-text ranking
    text = _best_scores(text_ranking(query=query, limit=depth, filters=filters))
    vector = _best_scores(
        vector_ranking(query=query, limit=depth, filters=filters, query_vector=embedding.result()[0])
    )
    fused = fuse_scores(vector, text)
    if not rerank:
        return _hits(fused[:k])
    candidates = _hits(fused[: max(RERANK_DEPTH, k)])
    return rerank_hits(query=query, hits=candidates, k=k).hits
