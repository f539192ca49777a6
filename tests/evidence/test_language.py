"""The words that name no topic are curators' data: one table, seeded from the shipped file, edited in admin."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evidence import language
from evidence.language import WordClass
from evidence.language.words import VOCABULARY_PATH, Words
from evidence.models import Word
from evidence.services.vocabulary_seed import vocabulary_seed
from evidence.text import content_terms
from research.rules.request import free_terms
from tests.conftest import seed_vocabulary
from tests.factories import UserFactory

BASE_DIR = Path(__file__).resolve().parents[2]
_LIST_TEXT = re.compile(r"[\sa-z'-]+")  # lines of lower-case words only: a list to be split, not prose
MIN_ENTRIES = 15  # the shortest of the eight lists the table replaced had 28


def _word_lists(path: Path) -> list[tuple[str, list[str]]]:
    """Module-level word collections of `path`: set, list or tuple literals of short strings, and word-only strings."""
    found = []
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        entries: list[str] = []
        for inner in ast.walk(node.value):
            if isinstance(inner, ast.Set | ast.List | ast.Tuple):
                entries += [e.value for e in inner.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            elif isinstance(inner, ast.Constant) and isinstance(inner.value, str) and "\n" in inner.value:
                entries += inner.value.split() if _LIST_TEXT.fullmatch(inner.value) else []
        entries = [entry.lower() for entry in entries if len(entry.split()) <= 3]
        if len(entries) >= MIN_ENTRIES:
            found.append((getattr(target, "id", "?"), entries))
    return found


@pytest.fixture
def words_restored(db):
    """Leave the process reading the shipped words again after a test that edits the table."""
    yield
    Word.objects.all().delete()
    language.refresh()


def test_every_shipped_class_is_a_known_class_and_every_word_is_written_in_lower_case() -> None:
    section = json.loads(VOCABULARY_PATH.read_text())["words"]
    assert set(section) == set(WordClass.values)
    for name, texts in section.items():
        assert texts == sorted(set(texts)), f"{name}: sorted, each word once"
        assert all(text == " ".join(text.lower().split()) for text in texts), name


def test_without_a_database_the_shipped_words_are_read() -> None:
    shipped = Words.from_rows(language.shipped_rows())
    assert language.current().of(*language.NOT_TOPIC) == shipped.of(*language.NOT_TOPIC)
    assert {"the", "which", "patients", "guideline"} <= language.words(*language.NOT_TOPIC)
    assert "apixaban" not in language.words(*WordClass.values)


@pytest.mark.django_db
def test_the_seed_writes_one_row_per_word_with_all_its_classes(words_restored) -> None:
    counts = vocabulary_seed().words
    assert counts.created == len(language.shipped_rows()) > 500
    rows = {word.text: word.classes for word in Word.objects.all()}
    assert rows["study"] == ["rows", "scaffolding"]  # one row, two classes: a question's scaffolding, and a tray's row
    assert rows["cancer"] == ["broad", "disease"]  # too broad to search a drug under, and a disease by name
    assert vocabulary_seed().words.unchanged == counts.created  # idempotent
    assert Word.objects.get(text="study").history.count() == 1


@pytest.mark.django_db
def test_a_curator_edit_applies_from_the_next_reading(words_restored) -> None:
    seed_vocabulary()
    language.refresh()
    assert content_terms("Dose of apixaban in frail patients") == ["dose", "apixaban", "frail"]

    Word.objects.create(text="frail", classes=[WordClass.SCAFFOLDING])
    Word.objects.filter(text="patients").delete()
    assert "frail" in content_terms("Dose of apixaban in frail patients")  # read once, not on every call

    language.refresh()
    assert content_terms("Dose of apixaban in frail patients") == ["dose", "apixaban", "patient"]


@pytest.mark.django_db
def test_a_new_request_word_is_a_row_not_a_commit(words_restored) -> None:
    seed_vocabulary()
    language.refresh()
    assert free_terms("kindly retrieve statin trials") == ["kindly retrieve statin"]
    for text in ("kindly", "retrieve"):
        Word.objects.create(text=text, classes=[WordClass.REQUEST])
    language.refresh()
    assert free_terms("kindly retrieve statin trials") == ["statin"]


@pytest.mark.django_db
def test_an_unseeded_table_reads_the_shipped_words(words_restored) -> None:
    assert not Word.objects.exists()
    assert language.refresh().of(WordClass.JUDGING) == Words.from_rows(language.shipped_rows()).of(WordClass.JUDGING)


def test_a_class_the_table_has_no_row_of_is_read_as_shipped(words_restored) -> None:
    # A database seeded before the outcome class existed: its other classes are the curators', outcome is shipped.
    Word.objects.create(text="kindly", classes=[WordClass.REQUEST])
    reading = language.refresh()
    assert reading.of(WordClass.REQUEST) == {"kindly"}
    assert "major bleeding" in reading.of(WordClass.OUTCOME)
    # Once curators keep outcome rows, those are the class.
    Word.objects.create(text="amputation", classes=[WordClass.OUTCOME])
    assert language.refresh().of(WordClass.OUTCOME) == {"amputation"}


def test_outcome_and_older_cues_come_from_the_table(words_restored) -> None:
    from evidence.concepts import question_concepts
    from evidence.lexicon import Lexicon
    from evidence.pico import extract_pico
    from evidence.vocabulary import load_vocabulary

    seed_vocabulary()
    vocabulary, lexicon = load_vocabulary(), Lexicon.load()
    question = "Apixaban in frail octogenarians with AF: does it reduce amputation?"
    language.refresh()
    pico = extract_pico(question, vocabulary=vocabulary)
    concepts = question_concepts(question, vocabulary=vocabulary, pico=pico, lexicon=lexicon)
    assert "older adults" in {c.label for c in concepts}
    assert pico.outcome == ""

    Word.objects.create(text="amputation", classes=[WordClass.OUTCOME])
    Word.objects.create(text="frail", classes=[WordClass.OLDER])
    Word.objects.filter(text="octogenarian").delete()
    language.refresh()
    assert extract_pico(question, vocabulary=vocabulary).outcome == "amputation"
    labels = {c.label for c in question_concepts(question, vocabulary=vocabulary, pico=pico, lexicon=lexicon)}
    assert "older adults" in labels and "frail" not in labels


def test_who_the_patients_are_is_read_from_the_population_class(words_restored) -> None:
    from evidence.text import is_population

    seed_vocabulary()
    language.refresh()
    assert is_population("pregnant women") and is_population("Children") and not is_population("regimen")
    assert not is_population("care home residents")
    Word.objects.create(text="residents", classes=[WordClass.POPULATION])
    language.refresh()
    assert is_population("care home residents")


def test_disease_and_intervention_head_nouns_are_curated_words(words_restored) -> None:
    from evidence.text import is_disease, is_intervention

    seed_vocabulary()
    language.refresh()
    assert is_disease("hip fracture") and is_disease("hepatitis") and not is_disease("tamsulosin")
    assert is_intervention("RSV vaccine") and is_intervention("apixaban") and not is_intervention("ureteric stones")
    assert not is_disease("ureteric stones")
    Word.objects.create(text="stones", classes=[WordClass.DISEASE])
    Word.objects.create(text="lithotripsy", classes=[WordClass.INTERVENTION])
    language.refresh()
    assert is_disease("ureteric stones") and is_intervention("shock wave lithotripsy")


def test_an_acronym_that_is_also_a_word_counts_only_in_capitals(words_restored) -> None:
    from evidence.vocabulary import load_vocabulary

    seed_vocabulary()
    language.refresh()
    vocabulary = load_vocabulary()
    assert "cap" in vocabulary.tags_in("Outpatient CAP, which antibiotic?", "disease")
    assert "cap" not in vocabulary.tags_in("Should I cap the dose of apixaban?", "disease")
    # A curator's row: "AF" written in lower case no longer counts either.
    Word.objects.create(text="af", classes=[WordClass.ACRONYM])
    language.refresh()
    assert "af" not in load_vocabulary().tags_in("af and ckd - which anticoagulant?", "disease")
    assert "af" in load_vocabulary().tags_in("AF and CKD - which anticoagulant?", "disease")


def test_a_curators_acronym_row_applies_to_the_very_next_question(words_restored) -> None:
    from chat.answer_settings import answer_settings
    from chat.pipeline.state import AnswerRun
    from chat.pipeline.understand import understand

    seed_vocabulary()
    language.refresh()
    Word.objects.create(text="af", classes=[WordClass.ACRONYM])
    run = AnswerRun(question="af and ckd - which anticoagulant?", settings=answer_settings(live_search=False))
    understand(run)  # reads the word table before it builds the vocabulary
    assert run.vocabulary is not None and "af" not in run.vocabulary.tags_in(run.question, "disease")


def test_a_word_needs_a_known_class_and_is_stored_in_lower_case() -> None:
    word = Word(text="  Kindly   Retrieve ", classes=["request", "request"])
    word.clean()
    assert (word.text, word.classes) == ("kindly retrieve", ["request"])
    with pytest.raises(ValidationError, match="at least one class"):
        Word(text="x", classes=[]).clean()
    with pytest.raises(ValidationError):
        Word(text="x", classes=["no-such-class"]).clean_fields()


@pytest.mark.django_db
def test_a_curator_adds_a_word_in_admin_with_its_classes_and_history(client, words_restored) -> None:
    curator = UserFactory(username="curator", is_staff=True, groups=["curator"])
    client.force_login(curator)
    response = client.post(reverse("admin:evidence_word_add"), {"text": "Kindly", "classes": ["request", "grammar"]})
    assert response.status_code == 302, response.content.decode()[:2000]
    word = Word.objects.get(text="kindly")
    assert word.classes == ["grammar", "request"]
    assert word.history.first().history_user == curator

    listed = client.get(reverse("admin:evidence_word_changelist"), {"class": "request"})
    assert b"kindly" in listed.content
    assert b"kindly" not in client.get(reverse("admin:evidence_word_changelist"), {"class": "broad"}).content


@pytest.mark.django_db
def test_staff_who_are_not_curators_only_view_the_words(client) -> None:
    client.force_login(UserFactory(username="viewer", is_staff=True))
    assert client.get(reverse("admin:evidence_word_changelist")).status_code == 200
    assert client.post(reverse("admin:evidence_word_add"), {"text": "x", "classes": ["grammar"]}).status_code == 403
    assert not Word.objects.exists()


def test_no_module_keeps_its_own_list_of_words_that_name_no_topic() -> None:
    """The eight lists of such words became the `Word` table; a new list of them in code fails here."""
    shipped = {text for text, _ in language.shipped_rows()}
    offenders = []
    for app in ("config", "evidence", "pubmed", "trials", "chat", "research"):
        for path in sorted((BASE_DIR / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for name, entries in _word_lists(path):
                share = sum(entry in shipped for entry in entries) / len(entries)
                if share >= 0.5:
                    offenders.append(f"{path.relative_to(BASE_DIR)}:{name} ({share:.0%} are rows of the word table)")
    assert not offenders, f"Words that name no topic belong in the Word table (evidence.language): {offenders}"


def test_the_guard_finds_a_list_of_words_that_name_no_topic(tmp_path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        f"_MINE = frozenset({('which', 'patients', 'evidence', 'study', 'show', 'find', 'the', 'a') * 2})\n"
        '_TEXT = """\n    safe safety effective dose doses treatment risk better\n'
        '    worth useful good harm manage way ways\n"""\n'
        'PROMPT = """Answer the question. Cite the study, the evidence and the patients who apply."""\n'
    )
    assert [name for name, _ in _word_lists(module)] == ["_MINE", "_TEXT"]


@pytest.mark.django_db
def test_the_words_that_make_a_claim_absolute_are_curated(words_restored) -> None:
    from evidence.claims.judge import _overstatement

    source = "Apixaban reduced stroke compared with warfarin in patients with atrial fibrillation."
    assert _overstatement("Apixaban cures stroke in all  patients.", source) == "cures"
    assert _overstatement("Apixaban invariably reduced stroke.", source) == ""
    Word.objects.create(text="invariably", classes=[WordClass.ABSOLUTE])
    language.refresh()
    assert _overstatement("Apixaban invariably reduced stroke.", source) == "invariably"
    assert _overstatement("Apixaban reduced stroke.", source) == ""
