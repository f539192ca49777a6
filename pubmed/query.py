"""The one PubMed query builder: concepts ANDed, each concept's terms ORed, user text always quoted.

A `Concept` is one idea of the question (a disease, a drug, an outcome, a study design): its
synonyms are searched in titles and abstracts, its MeSH headings and publication types under their
own field tags. Every term is quoted after the characters of PubMed syntax (`"`, `(`, `)`, `[`,
`]`) are removed, so text from a user or a model can never add operators, field tags or
unbalanced parentheses; a trailing `*` (truncation) is kept. No clause is written twice: terms
repeat neither within a concept (compared case-insensitively) nor as a whole concept, and a
concept with the same synonyms as an earlier one is merged into it.

When the query is longer than `max_length`, optional concepts are dropped (last first), then the
last term of the widest concept, until it fits; a concept always keeps its first term.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

TITLE_ABSTRACT = "Title/Abstract"
MESH_TERMS = "MeSH Terms"
PUBLICATION_TYPE = "Publication Type"
PUBLICATION_DATE = "Date - Publication"
MAX_QUERY_LENGTH = 1000  # characters; NCBI takes more, but longer queries are machine-made noise

_SYNTAX = re.compile(r'["()\[\]]')


class QueryError(ValueError):
    """The concepts cannot make a PubMed query (nothing to search for, or too long even when trimmed)."""


@dataclass(frozen=True)
class Concept:
    """One idea of a search: any of its synonyms, MeSH headings or publication types may match."""

    synonyms: Sequence[str] = ()
    mesh: Sequence[str] = ()
    publication_types: Sequence[str] = ()
    # An optional concept (e.g. an outcome) narrows the search and is dropped first when too long.
    optional: bool = False


def quote_term(text: str) -> str:
    """Return `text` as a quoted PubMed phrase without query syntax, or '' when nothing is left."""
    cleaned = " ".join(_SYNTAX.sub(" ", text).split())
    return f'"{cleaned}"' if cleaned.strip("*") else ""


@dataclass
class _Group:
    clauses: list[str]
    synonym_key: frozenset[str]
    optional: bool

    def render(self) -> str:
        return self.clauses[0] if len(self.clauses) == 1 else "(" + " OR ".join(self.clauses) + ")"


def _clauses(terms: Sequence[str], field: str) -> list[str]:
    quoted = [quote_term(term) for term in terms]
    return [f"{phrase}[{field}]" for phrase in quoted if phrase]


def _groups(concepts: Sequence[Concept]) -> list[_Group]:
    """Return one clause group per distinct concept, merging concepts with the same synonyms."""
    groups: list[_Group] = []
    for concept in concepts:
        synonyms = _clauses(concept.synonyms, TITLE_ABSTRACT)
        clauses = [
            *synonyms,
            *_clauses(concept.mesh, MESH_TERMS),
            *_clauses(concept.publication_types, PUBLICATION_TYPE),
        ]
        if not clauses:
            continue
        key = frozenset(clause.casefold() for clause in synonyms or clauses)
        group = next((group for group in groups if group.synonym_key == key), None)
        if group is None:
            group = _Group(clauses=[], synonym_key=key, optional=concept.optional)
            groups.append(group)
        else:
            group.optional = group.optional and concept.optional
        seen = {clause.casefold() for clause in group.clauses}
        for clause in clauses:
            if clause.casefold() not in seen:
                seen.add(clause.casefold())
                group.clauses.append(clause)
    return groups


def _date_range(year_from: int | None, year_to: int | None) -> str:
    if year_from is None and year_to is None:
        return ""
    start, end = year_from or 1800, year_to or 3000
    return f'("{start}"[{PUBLICATION_DATE}] : "{end}"[{PUBLICATION_DATE}])'


def _join(groups: list[_Group], date_range: str) -> str:
    return " AND ".join([*(group.render() for group in groups), *([date_range] if date_range else [])])


def build_query(
    concepts: Sequence[Concept],
    *,
    year_from: int | None = None,
    year_to: int | None = None,
    max_length: int = MAX_QUERY_LENGTH,
) -> str:
    """Return the PubMed query ANDing `concepts` (and a publication-year range); raise QueryError if none is usable."""
    groups = _groups(concepts)
    if not groups:
        raise QueryError("Nothing to search for: give at least one concept with a synonym, MeSH heading or type.")
    date_range = _date_range(year_from, year_to)
    query = _join(groups, date_range)
    while len(query) > max_length:
        optional = [group for group in groups if group.optional]
        if optional and len(groups) > 1:
            groups.remove(optional[-1])
        else:
            widest = max(groups, key=lambda group: len(group.clauses))
            if len(widest.clauses) == 1:
                raise QueryError(
                    f"The PubMed query needs {len(query)} characters even with one term per concept; "
                    f"the limit is {max_length}. Search for fewer concepts."
                )
            widest.clauses.pop()
        query = _join(groups, date_range)
    return query


def check_query_syntax(query: str) -> None:
    """Raise QueryError unless `query`'s quotes, parentheses and field-tag brackets are balanced."""
    if query.count('"') % 2:
        raise QueryError('the query has an unmatched double quote (")')
    depth = 0
    in_quotes = in_tag = False
    for char in query:
        if char == '"':
            in_quotes = not in_quotes
        elif in_quotes:
            continue
        elif char == "[":
            if in_tag:
                raise QueryError("a field tag opens inside another ([...[)")
            in_tag = True
        elif char == "]":
            if not in_tag:
                raise QueryError("the query has a ']' without its '['")
            in_tag = False
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise QueryError("the query closes a parenthesis it never opened")
    if in_tag:
        raise QueryError("the query has a '[' without its ']'")
    if depth:
        raise QueryError(f"the query leaves {depth} parenthesis(es) open")
