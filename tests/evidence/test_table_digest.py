"""The curated tables are read once per change, not once per question: a digest tells whether a reading still holds."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evidence import language
from evidence.classification import load_rules
from evidence.lexicon import Lexicon
from evidence.models import Abbreviation, ClassificationRule, DrugClass, Tag, Word
from evidence.table_digest import table_digests
from evidence.vocabulary import load_vocabulary

pytestmark = pytest.mark.django_db


@pytest.fixture
def words_restored():
    yield
    Word.objects.all().delete()
    language.refresh()


def test_every_insert_edit_and_delete_gives_another_digest_even_inside_one_transaction():
    table = Abbreviation._meta.db_table
    start = table_digests(table)
    row = Abbreviation.objects.create(term="XYZQ", expansions=["first reading"], case_sensitive=True)
    inserted = table_digests(table)
    # An edit inside the transaction that inserted the row keeps the row's transaction id: the digest still moves.
    row.expansions = ["second reading"]
    row.save()
    edited = table_digests(table)
    row.delete()
    assert len({start, inserted, edited}) == 3
    assert table_digests(table) == start


def test_the_digest_names_the_database_and_covers_each_table_asked():
    empty = table_digests(Tag._meta.db_table, DrugClass._meta.db_table)
    assert len(empty) == 3 and empty[-1] == connection.settings_dict["NAME"]
    DrugClass.objects.create(name="zz class", members=["zzmab"])
    digests = table_digests(Tag._meta.db_table, DrugClass._meta.db_table)
    assert digests[0] == empty[0] and digests[1] != empty[1]


def test_an_unchanged_lexicon_is_not_read_again_and_an_edit_applies_at_the_next_question():
    first = Lexicon.load()
    with CaptureQueriesContext(connection) as queries:
        assert Lexicon.load() is first
    assert len(queries) == 1  # the digest only
    Abbreviation.objects.create(term="QXZ", expansions=["quixotic zeal"], case_sensitive=True)
    edited = Lexicon.load()
    assert edited is not first and edited.wording["QXZ"] == ("quixotic zeal",)


def test_the_vocabulary_and_the_rules_follow_their_tables():
    vocabulary = load_vocabulary()
    assert load_vocabulary() is vocabulary
    Tag.objects.create(code="zz_test_condition", kind="disease", label="zebra fever", synonyms=["zebra fever"])
    assert "zz_test_condition" in load_vocabulary().terms
    rules = load_rules()
    ClassificationRule.objects.create(name="zz test rule", classification="zz", disease_tags=["zz_test_condition"],
                                      priority=1)
    assert [rule.name for rule in load_rules()] != [rule.name for rule in rules]
    assert "zz test rule" in {rule.name for rule in load_rules()}


def test_a_curators_word_applies_at_the_next_refresh(words_restored):
    language.refresh()
    assert "zzyzx" not in language.words(language.WordClass.GRAMMAR)
    Word.objects.create(text="zzyzx", classes=[language.WordClass.GRAMMAR.value])
    assert "zzyzx" in language.refresh().of(language.WordClass.GRAMMAR)
    Word.objects.filter(text="zzyzx").update(classes=[language.WordClass.ASKING.value])
    words = language.refresh()
    assert "zzyzx" in words.of(language.WordClass.ASKING) and "zzyzx" not in words.of(language.WordClass.GRAMMAR)


def test_a_reading_is_built_again_only_when_its_key_changes():
    from evidence.table_digest import ReadPerChange

    built: list[str] = []
    reading: ReadPerChange[str] = ReadPerChange()

    def build(value: str):
        return lambda: built.append(value) or value

    assert reading.get(("digest 1",), build("first")) == "first"
    assert reading.get(("digest 1",), build("second")) == "first"
    assert reading.get(("digest 2",), build("third")) == "third"
    assert built == ["first", "third"]
