"""The curated abbreviations and lay words, read in the sense the question calls for.

"NAC" is N-acetylcysteine and "heart attack" myocardial infarction wherever they are written; "PsA" is
Pseudomonas aeruginosa in a question about an infection and psoriatic arthritis in one about joints; "azithro"
also means a macrolide, its class, and "SGLT2i" also dapagliflozin and the other drugs of the class.
The rows are curators' data (`Abbreviation`, `DrugClass`); this module only reads them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Protocol

from evidence.matching import TextIndex, form_of
from evidence.models import Abbreviation, DrugClass
from evidence.table_digest import ReadPerChange, table_digests
from evidence.text import roman_value

HITS_CACHE_SIZE = 2000
# Shorthand as a question writes it: a word of 2-10 letters and digits (a hyphen inside) with at least two capitals
# ("LBP", "tPA", "HINT1", "PROMs").
_SHORTHAND = re.compile(r"(?<![\w-])([A-Za-z][A-Za-z0-9-]{1,9})(?![\w-])")
LexiconRow = tuple[str, tuple[str, ...], bool, tuple[str, ...]]  # term, expansions, case-sensitive, context
ClassRow = tuple[str, tuple[str, ...], tuple[str, ...]]  # class name, other wordings, members


class Defined(Protocol):
    """What a piece of shorthand stands for where the lexicon has no row for it (`pubmed.abbreviations.Definition`)."""

    @property
    def short(self) -> str: ...
    @property
    def long(self) -> str: ...
    @property
    def abstracts(self) -> int: ...  # how many define it so


class Define(Protocol):
    """Reads what `terms`, shorthand of `question`, stand for (`pubmed.selectors.shorthand_definitions`)."""

    def __call__(self, *, terms: Sequence[str], question: str) -> Sequence[Defined]: ...


_LOADED: ReadPerChange[Lexicon] = ReadPerChange()  # the lexicon last read, by the tables' digest


def _read_lexicon() -> Lexicon:
    rows = Abbreviation.objects.order_by("pk").values_list("term", "expansions", "case_sensitive", "context")
    classes = DrugClass.objects.order_by("name").values_list("name", "wordings", "members")
    return _built_lexicon(
        tuple((term, tuple(forms), sensitive, tuple(cues)) for term, forms, sensitive, cues in rows),
        tuple((name, tuple(wordings), tuple(members)) for name, wordings, members in classes),
    )


@lru_cache(maxsize=4)
def _built_lexicon(rows: tuple[LexiconRow, ...], classes: tuple[ClassRow, ...]) -> Lexicon:
    return Lexicon.build(rows, classes)


def _related(
    classes: Iterable[ClassRow], shorthand: dict[tuple[str, ...], list[tuple[str, ...]]]
) -> dict[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Return each drug's form → its classes' forms, and each class wording's form → its members' forms.

    A class is also named by the shorthand that stands for it (`shorthand`: a guideline's "MRAs" for a question's
    spironolactone). Never a drug to the other drugs of its class: azithromycin is not clarithromycin.
    """
    related: dict[tuple[str, ...], dict[tuple[str, ...], None]] = {}
    for name, wordings, members in classes:
        named = [form for form in map(form_of, (name, *wordings)) if form]
        named += [short for form in named for short in shorthand.get(form, ()) if short not in named]
        drugs = [form for form in map(form_of, members) if form]
        for drug in drugs:
            related.setdefault(drug, {}).update(dict.fromkeys(named))
        for form in named:
            related.setdefault(form, {}).update(dict.fromkeys(drugs))
    return {form: tuple(forms) for form, forms in related.items()}


@dataclass(frozen=True)
class Sense:
    """One reading of a term: what it stands for, and the words in a question that call for it."""

    expansions: tuple[str, ...]
    forms: tuple[tuple[str, ...], ...]
    cues: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Lexicon:
    """The curated abbreviations and lay words: each term's stem form → the forms it stands for.

    A term with several senses ("PsA", "MS") is read in the usual sense until `resolved` reads a
    question: then the sense whose context words the question uses wins. An ambiguous term does not
    stand for itself: "PsA" read as Pseudomonas aeruginosa is not matched by a text about "PSA".
    """

    entries: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    exact: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    wording: dict[str, tuple[str, ...]] = field(default_factory=dict)
    senses: dict[str, tuple[Sense, ...]] = field(default_factory=dict)  # wording key → senses, usual first
    # A drug's form → its classes' forms, a class's form → its drugs' forms (`DrugClass`).
    related: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    # Where each question writes the terms: a question is read by understanding, concepts and the checks alike.
    _hits: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls) -> Lexicon:
        """Return the lexicon from the `Abbreviation` and `DrugClass` tables: one small query while no row changed
        since the last question, two more when one did (built once per distinct table content, since stemming every
        expansion cost ~30 ms a question)."""
        return _LOADED.get(table_digests(Abbreviation._meta.db_table, DrugClass._meta.db_table), _read_lexicon)

    @classmethod
    def build(
        cls,
        rows: Iterable[tuple[str, Sequence[str], bool] | tuple[str, Sequence[str], bool, Sequence[str]]],
        classes: Iterable[ClassRow] = (),
    ) -> Lexicon:
        grouped: dict[tuple[str, bool], list[Sense]] = {}
        for term, expansions, case_sensitive, *rest in rows:
            cues = tuple(rest[0]) if rest else ()
            own = form_of(term)
            forms = tuple(dict.fromkeys(form for form in (own, *map(form_of, expansions)) if form))
            sense = Sense(tuple(expansions), forms, tuple(f for f in map(form_of, cues) if f))
            grouped.setdefault((term if case_sensitive else term.lower(), case_sensitive), []).append(sense)
        entries: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = {}
        exact: dict[str, tuple[tuple[str, ...], ...]] = {}
        wording: dict[str, tuple[str, ...]] = {}
        senses: dict[str, tuple[Sense, ...]] = {}
        for (key, case_sensitive), found in grouped.items():
            ordered = sorted(found, key=lambda sense: bool(sense.cues))  # the usual reading (no context) first
            if len(ordered) > 1:
                own = form_of(key)
                ordered = [replace(sense, forms=tuple(f for f in sense.forms if f != own)) for sense in ordered]
                senses[key] = tuple(ordered)
            usual = ordered[0]
            if case_sensitive:
                exact[key] = usual.forms
            elif form_of(key):
                entries[form_of(key)] = usual.forms
            wording[key] = usual.expansions
        shorthand: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        for (key, _), found in grouped.items():
            for form in dict.fromkeys(form for sense in found for form in sense.forms if form != form_of(key)):
                shorthand.setdefault(form, []).append(form_of(key))
        return cls(entries, exact, wording, senses, _related(classes, shorthand))

    def resolved(self, question: str) -> Lexicon:
        """Return the lexicon with each ambiguous term of `question` read in the sense its context calls for.

        A sense scores one point per context word or phrase found in the question or in what the
        question's other terms stand for ("CF" → cystic fibrosis); the highest score wins, and the
        usual reading when no sense scores.
        """
        found = self.hits(question)
        present = list(dict.fromkeys(key for key, _, _ in found if key in self.senses))
        if not present:
            return self
        spelled = " ".join(
            e for key in dict.fromkeys(k for k, _, _ in found) if key not in self.senses for e in self.wording[key]
        )
        index = TextIndex(f"{question} {spelled}")
        entries, exact, wording = dict(self.entries), dict(self.exact), dict(self.wording)
        for key in present:
            options = self.senses[key]
            chosen = max(options, key=lambda sense: sum(index.has(cue) for cue in sense.cues))
            if key in exact:
                exact[key] = chosen.forms
            else:
                entries[form_of(key)] = chosen.forms
            wording[key] = chosen.expansions
        # The same terms as this lexicon's (only their senses differ), so the same places: `_hits` is shared.
        return replace(self, entries=entries, exact=exact, wording=wording)

    def read_for(
        self, question: str, *, names: Iterable[str] = (), define: Define | None = None
    ) -> tuple[Lexicon, list[Defined]]:
        """Return the lexicon read for `question` - each ambiguous term in the sense it calls for, and the shorthand
        no row spells out ("LBP") as `define` reads it (the stored abstracts' definitions) - and those definitions.

        One reading for the answer pipeline and the research trays. A term defined so is a topic word still, weighed
        by its rarity, that its long form also covers; `names` (a study's, "DYNAMIC") are names, not shorthand.
        """
        lexicon = self.resolved(question)
        shorthand = lexicon.unknown_shorthand(question, names) if define is not None else []
        if not shorthand or define is None:
            return lexicon, []
        defined = list(define(terms=shorthand, question=question))
        return (lexicon.with_terms([(d.short, (d.long,), False, ()) for d in defined]) if defined else lexicon), defined

    def with_terms(self, rows: Iterable[LexiconRow]) -> Lexicon:
        """Return the lexicon with `rows` added where it has no such term; where a question writes its terms is
        found afresh (a term added to read one question: `pubmed.abbreviations`)."""
        added = Lexicon.build(rows)
        return replace(
            self,
            entries={**added.entries, **self.entries},
            exact={**added.exact, **self.exact},
            wording={**added.wording, **self.wording},
            _hits={},
        )

    def unknown_shorthand(self, question: str, names: Iterable[str] = ()) -> list[str]:
        """Return the words of `question` written as shorthand (two capitals or more) that this lexicon does not
        spell out, in order, once each; a Roman numeral is a stage or class, and one of `names` (a study's) a name."""
        known = {question[start:end].lower() for _, start, end in self.hits(question)} | {n.lower() for n in names}
        found = [
            word
            for word in _SHORTHAND.findall(question)
            if sum(ch.isupper() for ch in word) >= 2 and roman_value(word) is None and word.lower() not in known
        ]
        return list(dict.fromkeys(found))

    def is_ambiguous(self, written: str) -> bool:
        """Return whether `written` is a term with several senses, so that alone it says nothing certain."""
        return written in self.senses if written in self.exact else written.lower() in self.senses

    def hits(self, question: str) -> list[tuple[str, int, int]]:
        """Return where the question writes the lexicon's terms, as (term, start, end) in reading order.

        The longest term wins a place: "PD-L1" is not "PD", "CKD3b" is not "CKD". Of two terms on the
        same letters, the one written with its exact capitals wins ("PsA" over the case-blind "PSA").
        """
        known = self._hits.get(question)
        if known is not None:
            return list(known)
        found = [
            (key, hit.start(), hit.end())
            for key in self.wording
            for hit in _term_pattern(key, key in self.exact).finditer(question)
        ]
        kept = [
            (key, start, end)
            for key, start, end in found
            if not any(
                s <= start and end <= e and ((e - s) > (end - start) or (key not in self.exact and other in self.exact))
                for other, s, e in found
                if other != key
            )
        ]
        if len(self._hits) >= HITS_CACHE_SIZE:
            self._hits.clear()
        self._hits[question] = sorted(kept, key=lambda hit: hit[1])
        return list(self._hits[question])

    def spelled_phrases(self, question: str, words: int = 3) -> list[tuple[str, int, int]]:
        """Return each piece of shorthand spelled out inside its neighbouring words, as (phrase, start, end) with
        the spelled-out part at [start, end): "bleeding DU, clipped" reads "bleeding duodenal ulcer, clipped", so
        a condition the question names by a word and a piece of shorthand together is found."""
        phrases = []
        for key, start, end in self.hits(question):
            spelled = self.wording[key][0]
            if spelled.lower() == question[start:end].lower():
                continue
            before = " ".join(question[:start].split()[-words:])
            after = " ".join(question[end:].split()[:words])
            lead = f"{before} " if before else ""
            phrases.append((f"{lead}{spelled} {after}".strip(), len(lead), len(lead) + len(spelled)))
        return phrases

    def spelled_inline(self, text: str) -> str:
        """Return `text` with each abbreviation and lay word replaced, where it is written, by what it stands for
        ("outpt CAP - which abx?" reads "outpatient community-acquired pneumonia - which antibiotics?")."""
        parts, end = [], 0
        for key, start, stop in self.hits(text):
            parts += [text[end:start], self.wording[key][0] if self.wording[key] else text[start:stop]]
            end = stop
        return "".join([*parts, text[end:]])

    def expand(self, form: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
        """Return `form` with everything the lexicon says it stands for, and the drug classes or drugs those are."""
        return self.with_related((form, *self.entries.get(form, ())))

    def with_related(self, forms: Iterable[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
        """Return `forms`, then the classes of the drugs among them and the drugs of the classes among them."""
        own = tuple(dict.fromkeys(forms))
        return tuple(dict.fromkeys((*own, *(other for form in own for other in self.related.get(form, ())))))

    def drug_spans(self, question: str) -> list[tuple[int, int]]:
        """Return where `question` names a drug or drug class the curated classes know (`DrugClass`), in its own
        words ("macrolide", "azithromycin") or in shorthand ("resp FQ")."""
        spans = [
            (start, end)
            for key, start, end in self.hits(question)
            if any(form in self.related for form in self.entries.get(form_of(key), self.exact.get(key, ())))
        ]
        return spans + [
            word.span()
            for word in re.finditer(r"[A-Za-z][A-Za-z-]*", question)
            if not any(start <= word.start() < end for start, end in spans) and form_of(word.group(0)) in self.related
        ]

    def spelled_out(self, question: str) -> list[str]:
        """Return what the question's abbreviations and lay words stand for, as the literature writes it."""
        lowered = question.lower()
        keys = dict.fromkeys(key for key, _, _ in self.hits(question))
        return list(dict.fromkeys(e for key in keys for e in self.wording[key] if e.lower() not in lowered))


@lru_cache(maxsize=4096)
def _term_pattern(term: str, exact: bool) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", 0 if exact else re.IGNORECASE)
