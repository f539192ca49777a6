import pytest

from pubmed.models import LexemeStat
from pubmed.parsers import AbstractRecord
from pubmed.selectors import word_document_frequencies
from pubmed.services.lexemes import lexeme_stats_refresh
from pubmed.services.store import abstracts_upsert

pytestmark = pytest.mark.django_db


def test_word_frequencies_come_from_lexeme_stats_in_one_query(django_assert_num_queries):
    abstracts_upsert(
        records=[
            AbstractRecord(pmid="1", title="Apixaban in kidney disease", abstract="Apixaban lowered stroke."),
            AbstractRecord(pmid="2", title="Warfarin dosing", abstract="Warfarin needs monitoring of stroke risk."),
        ],
        embed=False,
    )
    total = lexeme_stats_refresh()
    with django_assert_num_queries(2):
        frequencies, counted = word_document_frequencies(["apixaban", "Strokes", "the", "zebrafish", "apixaban"])
    assert counted == total >= 2
    assert frequencies == {"apixaban": 1, "Strokes": 2, "the": 0, "zebrafish": 0}


def test_word_frequencies_are_empty_before_anything_is_counted():
    LexemeStat.objects.all().delete()  # the state of a store whose statistics were never computed
    assert word_document_frequencies(["apixaban"]) == ({}, 0)
