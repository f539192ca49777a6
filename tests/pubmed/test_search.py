"""Vector, full-text and hybrid retrieval over real abstracts; filters; fusion; reranking hooks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pubmed.models import Abstract
from pubmed.parsers import AbstractRecord
from pubmed.pubmedqa import pubmedqa_records
from pubmed.services import search
from pubmed.services.search import fuse_scores, hybrid_search, semantic_search, therapeutic_query
from pubmed.services.store import abstracts_upsert

QA_SAMPLE = 40


@pytest.fixture(scope="module")
def stored_corpus(django_db_setup: None, django_db_blocker: object, shared_data: object,
                  recorded_records: dict[str, AbstractRecord]) -> Iterator[list]:
    """Embed and store the corpus once for this module (committed), and remove it afterwards."""
    records, questions = pubmedqa_records()
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        abstracts_upsert(records=[*recorded_records.values(), *records[:QA_SAMPLE]])
        try:
            yield questions[:QA_SAMPLE]
        finally:
            Abstract.objects.all().delete()


@pytest.fixture
def corpus(stored_corpus: list, db: None) -> list:
    """The recorded efetch abstracts plus the first 40 PubMedQA abstracts; returns those questions."""
    return stored_corpus


# These two run before any test that stores the module's corpus.
@pytest.mark.parametrize(("query", "k", "message"), [("  ", 5, "The search query is empty."),
                                                     ("x", 0, "k must be between 1 and 100, got 0.")])
def test_bad_arguments(db: None, query: str, k: int, message: str) -> None:
    with pytest.raises(ValueError) as excinfo:
        hybrid_search(query=query, k=k)
    assert str(excinfo.value) == message


def test_empty_store_returns_nothing(db: None) -> None:
    assert hybrid_search(query="metformin", k=5) == []


def test_pubmedqa_questions_find_their_own_abstract(corpus: list) -> None:
    for method in (
        lambda q: semantic_search(q, 5),
        lambda q: search.fulltext_search(q, 5),
        lambda q: hybrid_search(query=q, k=5),
    ):
        ranked = [[hit.pmid for hit in method(item.question)] for item in corpus]
        top1 = sum(1 for pmids, item in zip(ranked, corpus, strict=True) if pmids[:1] == [item.pmid])
        top5 = sum(1 for pmids, item in zip(ranked, corpus, strict=True) if item.pmid in pmids)
        assert top1 >= 34
        assert top5 >= 38


def test_hit_carries_everything_a_citation_needs(corpus: list) -> None:
    (hit,) = hybrid_search(query="trametinib MEK inhibition BRAF V600E melanoma overall survival", k=1)
    assert hit.pmid == "22663011"
    assert hit.doc_id == "pmid:22663011"
    assert hit.chunk_id.startswith("c")
    assert hit.title.startswith("Improved survival with MEK inhibition")
    assert (hit.journal, hit.year, hit.doi, hit.pmcid) == ("N Engl J Med", 2012, "10.1056/NEJMoa1203421", "")
    assert hit.authors[0] == "Flaherty KT"
    assert "Clinical Trial, Phase III" in hit.publication_types
    assert hit.text and hit.score > 0


def test_mesh_include_and_exclude_filters(corpus: list) -> None:
    query = "coronavirus pneumonia outbreak"
    included = hybrid_search(query=query, k=10, mesh_include=["covid-19"])  # case-insensitive descriptor match
    assert {h.pmid for h in included} == {"31978945", "32887691", "33515491"}
    either = hybrid_search(query=query, k=10, mesh_include=["Seroepidemiologic Studies", "Pandemics"])
    assert {h.pmid for h in either} == {"32887691", "33515491"}
    excluded = hybrid_search(query=query, k=10, mesh_exclude=["COVID-19"])
    assert excluded
    assert {"31978945", "32887691", "33515491"}.isdisjoint(h.pmid for h in excluded)
    assert "31978945" in {h.pmid for h in hybrid_search(query=query, k=10)}


def test_year_range_is_inclusive(corpus: list) -> None:
    hits = hybrid_search(query="randomized trial survival", k=20, year_from=2020, year_to=2021)
    assert hits
    assert all(2020 <= h.year <= 2021 for h in hits)
    with pytest.raises(ValueError, match=r"year_from \(2022\) is after year_to \(2020\)\."):
        hybrid_search(query="x", year_from=2022, year_to=2020)


def test_therapeutic_framing() -> None:
    assert therapeutic_query(drug=" metformin ", disease="breast cancer") == (
        "Evidence for metformin as a treatment for breast cancer, including clinical trials, efficacy data, "
        "and mechanism of action"
    )


def test_score_fusion_prefers_agreement() -> None:
    vector = [("1", 10, 0.9), ("2", 20, 0.8), ("3", 30, 0.1)]
    text = [("2", 21, 5.0), ("4", 40, 4.0), ("1", 11, 1.0)]
    fused = fuse_scores(vector, text, vector_weight=0.7)
    # Normalised: vector 1→1, 2→0.875, 3→0; text 2→1, 4→0.75, 1→0.
    assert [(pmid, round(score, 4)) for pmid, _, score in fused] == [
        ("2", 0.9125), ("1", 0.7), ("4", 0.225), ("3", 0.0)
    ]
    assert dict((pmid, chunk) for pmid, chunk, _ in fused) == {"1": 10, "2": 20, "3": 30, "4": 40}


_ranking = st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(1, 99), st.floats(0, 1)), max_size=8).map(
    lambda rows: list({pmid: (pmid, chunk, score) for pmid, chunk, score in rows}.values())
)


@given(_ranking, _ranking, st.floats(0, 1))
def test_fusion_returns_each_abstract_once_best_first(vector: list, text: list, weight: float) -> None:
    fused = fuse_scores(vector, text, vector_weight=weight)
    assert sorted(pmid for pmid, _, _ in fused) == sorted({p for p, _, _ in vector} | {p for p, _, _ in text})
    scores = [score for _, _, score in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(-1e-9 <= score <= 1 + 1e-9 for score in scores)


@pytest.mark.parametrize(
    ("lexemes", "total", "expected"),
    [
        # The rarest lexemes fit the budget: ORed, rarest first, while their chunks stay within it.
        ([("patient", 0.5), ("metformin", 0.0001), ("lactat", 0.0004)], 1_000_000, "'metformin' | 'lactat'"),
        # Every lexeme is common: the two rarest must occur together (800 chunks; any two of the three
        # rarest would be 82,400).
        ([("patient", 0.5), ("studi", 0.4), ("effect", 0.2), ("risk", 0.004)], 1_000_000, "'risk' & 'effect'"),
        # Even the two rarest together are over budget (20,000 chunks): the rarest k together, until within it.
        (
            [("patient", 0.5), ("studi", 0.4), ("effect", 0.2), ("risk", 0.1), ("year", 0.1)],
            1_000_000,
            "'risk' & 'year' & 'effect' & 'studi'",
        ),
        # Each alone is over budget, pairs are rare: any two of the four rarest.
        (
            [("a", 0.002), ("b", 0.003), ("c", 0.004), ("d", 0.005), ("e", 0.9)],
            1_000_000,
            "'a' & 'b' | 'a' & 'c' | 'a' & 'd' | 'b' & 'c' | 'b' & 'd' | 'c' & 'd'",
        ),
        # One lexeme, however common, is the query.
        ([("patient", 0.5)], 1_000_000, "'patient'"),
        # Before the lexeme statistics are first counted every lexeme is a candidate word.
        ([("patient", 0.0), ("metformin", 0.0)], 0, "'metformin' | 'patient'"),
        ([("o'brien", 0.0)], 10, "'o''brien'"),
    ],
)
def test_candidate_tsquery_stays_within_budget(lexemes: list[tuple[str, float]], total: int, expected: str) -> None:
    assert search.FTS_CANDIDATE_BUDGET == 1000
    assert search.candidate_tsquery(lexemes, total=total) == expected


def test_candidate_tsquery_needs_a_lexeme() -> None:
    with pytest.raises(ValueError, match=r"^A full-text query needs at least one lexeme\.$"):
        search.candidate_tsquery([], total=10)


@pytest.fixture
def common_words(corpus: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six abstracts over three invented words, each word over a candidate budget of one chunk."""
    from pubmed.services.lexemes import lexeme_stats_refresh

    texts = ["zorblat quexin mivrane", "zorblat quexin", "zorblat alone", "quexin alone", "mivrane alone",
             "nothing shared"]
    abstracts_upsert(
        records=[AbstractRecord(pmid=f"9900000{i}", title="Invented", abstract=text) for i, text in enumerate(texts)],
        embed=False,
    )
    lexeme_stats_refresh()
    monkeypatch.setattr(search, "FTS_CANDIDATE_BUDGET", 1)


def test_common_words_rank_only_chunks_holding_two_of_them(common_words: None) -> None:
    ranking = search.text_ranking(query="zorblat quexin mivrane", limit=10)
    assert [pmid for _, pmid, _ in ranking] == ["99000000", "99000001"]


def test_full_text_ranks_at_most_the_candidate_limit(common_words: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "FTS_CANDIDATE_LIMIT", 1)
    assert len(search.text_ranking(query="zorblat quexin mivrane", limit=10)) == 1
