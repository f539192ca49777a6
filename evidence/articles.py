"""What a PubMed record looks like to the evidence layer: a stored abstract, an esummary row, a search hit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evidence.levels import LevelAssessment, assess_level, level_assessment


class Article(Protocol):
    """What a PubMed record carries: a stored abstract, an esummary row, a search hit."""

    @property
    def pmid(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def doi(self) -> str: ...

    @property
    def pmcid(self) -> str: ...

    @property
    def authors(self) -> Sequence[str]: ...

    @property
    def journal(self) -> str: ...

    @property
    def year(self) -> int | None: ...

    @property
    def publication_types(self) -> Sequence[str]: ...

    @property
    def is_retracted(self) -> bool: ...


class SearchHit(Article, Protocol):
    """What a stored-abstract search hit carries besides the record (pubmed.services.search.ChunkHit)."""

    @property
    def chunk_id(self) -> str: ...

    @property
    def doc_id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def section(self) -> str: ...

    @property
    def evidence_level(self) -> str: ...

    @property
    def evidence_level_inferred(self) -> bool: ...


def article_level(article: Article) -> LevelAssessment:
    """Return a stored abstract's level as stored; an esummary row's from its types and title."""
    stored = getattr(article, "evidence_level", "")
    if stored:
        return level_assessment(stored, inferred=bool(getattr(article, "evidence_level_inferred", False)))
    return assess_level(publication_types=article.publication_types or (), title=article.title)
