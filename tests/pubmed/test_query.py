"""The one PubMed query builder: a table of concepts and the exact query each gives."""

from __future__ import annotations

import pytest

from pubmed.query import Concept, QueryError, build_query, check_query_syntax, quote_term

TA, MH, PT = "[Title/Abstract]", "[MeSH Terms]", "[Publication Type]"


@pytest.mark.parametrize(
    ("concepts", "options", "expected"),
    [
        pytest.param([Concept(synonyms=["apixaban"])], {}, f'"apixaban"{TA}', id="one-term"),
        pytest.param(
            [
                Concept(synonyms=["atrial fibrillation", "AF"], mesh=["Atrial Fibrillation"]),
                Concept(synonyms=["apixaban"]),
            ],
            {},
            f'("atrial fibrillation"{TA} OR "AF"{TA} OR "Atrial Fibrillation"{MH}) AND "apixaban"{TA}',
            id="concepts-anded-synonyms-ored",
        ),
        pytest.param(
            [Concept(synonyms=["Metformin", "metformin", " METFORMIN "], mesh=["Metformin", "metformin"])],
            {},
            f'("Metformin"{TA} OR "Metformin"{MH})',
            id="terms-deduplicated-case-insensitively",
        ),
        pytest.param(
            [
                Concept(synonyms=["CKD", "chronic kidney disease"]),
                Concept(synonyms=["apixaban"]),
                Concept(synonyms=["chronic kidney disease", "ckd"], mesh=["Renal Insufficiency, Chronic"]),
            ],
            {},
            f'("CKD"{TA} OR "chronic kidney disease"{TA} OR "Renal Insufficiency, Chronic"{MH}) AND "apixaban"{TA}',
            id="concept-with-same-synonyms-merged",
        ),
        pytest.param(
            [Concept(mesh=["Neoplasms"]), Concept(mesh=["neoplasms"])],
            {},
            f'"Neoplasms"{MH}',
            id="repeated-concept-written-once",
        ),
        pytest.param(
            [Concept(synonyms=['pembro"lizumab[', "x) OR (y"]), Concept(synonyms=["lung (cancer)"])],
            {},
            f'("pembro lizumab"{TA} OR "x OR y"{TA}) AND "lung cancer"{TA}',
            id="user-syntax-cannot-escape-the-quotes",
        ),
        pytest.param(
            [Concept(synonyms=["metformin", '""', "()"]), Concept(synonyms=["  "])],
            {},
            f'"metformin"{TA}',
            id="empty-terms-and-concepts-dropped",
        ),
        pytest.param([Concept(synonyms=["outcome*"])], {}, f'"outcome*"{TA}', id="truncation-kept"),
        pytest.param(
            [Concept(synonyms=["metformin"]), Concept(publication_types=["Systematic Review", "Guideline"])],
            {"year_from": 2019},
            f'"metformin"{TA} AND ("Systematic Review"{PT} OR "Guideline"{PT}) AND '
            '("2019"[Date - Publication] : "3000"[Date - Publication])',
            id="publication-types-and-open-year-range",
        ),
        pytest.param(
            [Concept(synonyms=["metformin"])],
            {"year_from": 2015, "year_to": 2020},
            f'"metformin"{TA} AND ("2015"[Date - Publication] : "2020"[Date - Publication])',
            id="closed-year-range",
        ),
        pytest.param(
            [Concept(synonyms=["apixaban"]), Concept(synonyms=["stroke", "bleeding"], optional=True)],
            {"max_length": 40},
            f'"apixaban"{TA}',
            id="optional-concept-dropped-when-too-long",
        ),
        pytest.param(
            [Concept(synonyms=["apixaban"]), Concept(synonyms=["stroke"], optional=True)],
            {},
            f'"apixaban"{TA} AND "stroke"{TA}',
            id="optional-concept-kept-when-it-fits",
        ),
        pytest.param(
            [Concept(synonyms=["atrial fibrillation", "AF", "auricular fibrillation"]), Concept(synonyms=["apixaban"])],
            {"max_length": 96},
            f'("atrial fibrillation"{TA} OR "AF"{TA}) AND "apixaban"{TA}',
            id="last-synonym-of-the-widest-concept-trimmed",
        ),
    ],
)
def test_build_query(concepts: list[Concept], options: dict[str, int], expected: str) -> None:
    query = build_query(concepts, **options)
    assert query == expected
    check_query_syntax(query)


def test_no_usable_concept_is_an_error() -> None:
    with pytest.raises(QueryError, match="Nothing to search for"):
        build_query([Concept(synonyms=["()"])])


def test_a_query_that_cannot_fit_even_trimmed_is_an_error() -> None:
    with pytest.raises(QueryError, match=r"needs 57 characters even with one term per concept; the limit is 30"):
        build_query([Concept(synonyms=["apixaban", "eliquis"]), Concept(synonyms=["dialysis"])], max_length=30)


@pytest.mark.parametrize(("text", "quoted"), [("breast  cancer", '"breast cancer"'), ('a"b', '"a b"'), ("*", "")])
def test_quote_term(text: str, quoted: str) -> None:
    assert quote_term(text) == quoted


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ('"atrial fibrillation', 'unmatched double quote'),
        ("(apixaban OR rivaroxaban", "leaves 1 parenthesis(es) open"),
        ("apixaban) AND (stroke", "closes a parenthesis it never opened"),
        ("apixaban[tiab", "has a '[' without its ']'"),
        ("apixaban]", "has a ']' without its '['"),
        ("apixaban[ti[ab]]", "a field tag opens inside another"),
    ],
)
def test_unbalanced_syntax_is_rejected(query: str, message: str) -> None:
    with pytest.raises(QueryError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        check_query_syntax(query)


@pytest.mark.parametrize(
    "query",
    ['("a (b)"[tiab] OR c[MeSH]) AND d', "apixaban atrial fibrillation dialysis", '"x [y"[tiab]'],
)
def test_balanced_syntax_is_accepted(query: str) -> None:
    check_query_syntax(query)
