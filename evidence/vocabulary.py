"""The tag vocabulary as a matcher: find disease and decision tags in free text.

Matching is at word boundaries ("af" never matches inside "after"), case-insensitive, except for
short upper-case acronyms that are also everyday words ("CAP", "DES"), which must be written in
capitals to count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from evidence import language
from evidence.models import Tag, TagKind
from evidence.table_digest import ReadPerChange, table_digests


@dataclass(frozen=True)
class TagMatch:
    code: str
    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class VocabularyTerm:
    code: str
    kind: str
    label: str
    synonyms: tuple[str, ...]
    mesh_terms: tuple[str, ...]
    broader: str | None
    is_imaging_term: bool
    is_generic: bool = False  # a generic decision (treatment, drug choice)
    is_modifier: bool = False  # narrows a disease (stage, assay type)
    patient_wordings: tuple[str, ...] = ()  # wordings that say who the patients are ("diagnosed")
    answer_kind: str = ""  # the kind of answer a question on this decision asks for ("timing" for restart)


# Inflections a lower-case word synonym may carry: restart → restarted, omit → omitted, stop → stopping.
_INFLECTION = r"(?:s|es|d|ed|ing|[tpg]ed|[tpg]ing)?"


@lru_cache(maxsize=16384)
def _pattern(phrase: str, acronym: bool = False) -> re.Pattern[str]:
    # Cached: the vocabulary is rebuilt per question (curators' edits apply at once), and compiling its
    # thousands of phrases again each time - more than `re`'s own cache holds - was a quarter of an answer's CPU.
    # `acronym`: an acronym whose lower-case form is an ordinary word (`language.WordClass.ACRONYM`).
    phrase = phrase.strip()
    if acronym:
        # "CAP" the pneumonia, never "cap" the verb: only the capitalised acronym counts.
        return re.compile(r"(?<!\w)" + re.escape(phrase.upper()) + r"(?!\w)")
    if re.fullmatch(r"[a-z]{1,2}[A-Z][A-Za-z0-9]*", phrase):
        # A lower-case lead letter is part of the name: "eGFR" (or "egfr") is kidney function, "EGFR" a receptor.
        return re.compile(r"(?<!\w)(?:" + re.escape(phrase) + "|" + re.escape(phrase.lower()) + r")(?!\w)")
    words = [re.escape(word) for word in phrase.split() if word]
    body = r"[\s-]+".join(words)
    if phrase.isalpha() and phrase.islower() and len(phrase) >= 4:
        body += _INFLECTION
    elif len(words) > 1 and all(word.isalpha() and word.islower() for word in phrase.split()):
        body += "s?"  # a phrase's last word in the plural: "which drugs" is "which drug" asked of several
    # \b only works next to word characters; phrases may start/end with symbols ("P2Y12", "CHA2DS2-VASc").
    # A hyphen still ends a word: "ctDNA-negative" names ctDNA, "dose-reduced" names dose.
    prefix = r"(?<!\w)" if phrase[:1].isalnum() else ""
    suffix = r"(?!\w)" if phrase[-1:].isalnum() else ""
    return re.compile(prefix + body + suffix, re.IGNORECASE)


@dataclass
class Vocabulary:
    """Every tag with its compiled synonym patterns; built from the database per question."""

    terms: dict[str, VocabularyTerm]
    # Synonyms matched only in capitals: acronyms whose lower-case form is an ordinary word ("CAP", not "cap").
    acronyms: frozenset[str] = field(default_factory=lambda: language.words(language.WordClass.ACRONYM))
    # (pattern, term, key): the key is the phrase's longest word in lower case, which every match contains.
    _patterns: list[tuple[re.Pattern[str], VocabularyTerm, str]] = field(default_factory=list, repr=False)
    _matched: dict[str, tuple[TagMatch, ...]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        pairs: list[tuple[str, VocabularyTerm]] = []
        for term in self.terms.values():
            for phrase in {term.label, term.code.replace("_", " "), *term.synonyms}:
                if phrase.strip():
                    pairs.append((phrase, term))
        # Longest phrases first, so "atrial fibrillation" claims its words before "fibrillation" could.
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
        self._patterns = [
            (_pattern(phrase, phrase.strip().lower() in self.acronyms), term, max(phrase.lower().split(), key=len))
            for phrase, term in pairs
        ]

    @classmethod
    def from_terms(cls, terms: Iterable[VocabularyTerm]) -> Vocabulary:
        """Return the vocabulary of `terms`: the same instance while the terms are the same (compiling ~400
        patterns, and matching texts already matched, is then done once, not on every question)."""
        return _vocabulary(tuple(terms), language.words(language.WordClass.ACRONYM))

    def is_modifier(self, code: str) -> bool:
        """Return True for a tag that only qualifies a disease (stage, assay type) and never stands for one."""
        term = self.terms.get(code)
        return bool(term and term.is_modifier)

    def is_generic(self, code: str) -> bool:
        """Return True for a generic decision (treatment, drug choice): primary only when nothing else is asked."""
        term = self.terms.get(code)
        return bool(term and term.is_generic)

    def answer_kind(self, code: str) -> str:
        """Return the kind of answer (drug, dose, duration, timing) a question on decision `code` asks for, or ""."""
        term = self.terms.get(code)
        return term.answer_kind if term else ""

    def conditions(self, tags: Iterable[str]) -> list[str]:
        """Return `tags` without the modifiers: the conditions they name."""
        return [tag for tag in tags if not self.is_modifier(tag)]

    def codes(self, kind: str | None = None) -> set[str]:
        return {code for code, term in self.terms.items() if kind is None or term.kind == kind}

    def matches(self, text: str) -> list[TagMatch]:
        """Return tag matches in reading order; the longest phrase wins an overlap.

        The same span may carry several tags when their synonyms coincide ("community-acquired
        pneumonia" is both `cap` and `community_acquired_pneumonia`).
        """
        known = self._matched.get(text)
        if known is not None:
            return list(known)
        taken: list[tuple[int, int]] = []
        found: list[TagMatch] = []
        lowered = text.lower()
        for pattern, term, key in self._patterns:
            if key not in lowered:  # most of ~1,000 phrases are absent; a substring test rules them out cheaply
                continue
            for match in pattern.finditer(text):
                start, end = match.span()
                if any(
                    start < other_end and other_start < end and (start, end) != (other_start, other_end)
                    for other_start, other_end in taken
                ):
                    continue
                if any(m.code == term.code and m.start == start for m in found):
                    continue
                taken.append((start, end))
                found.append(TagMatch(term.code, term.kind, start, end, match.group(0)))
        ordered = sorted(found, key=lambda m: m.start)
        if len(self._matched) >= MATCH_CACHE_SIZE:
            self._matched.clear()
        self._matched[text] = tuple(ordered)
        return ordered

    def tags_in(self, text: str, kind: str) -> list[str]:
        """Return the codes of `kind` found in `text`, first mention first, without repeats."""
        ordered: dict[str, None] = {}
        for match in self.matches(text):
            if match.kind == kind:
                ordered.setdefault(match.code, None)
        return list(ordered)

    def present_in(self, text: str) -> list[str]:
        """Return the conditions `text` names as present, first mention first: "with no prior AF diagnosis, a
        device-detected atrial high-rate episode ..." is stated for AHRE, not for AF."""
        return list(dict.fromkeys(m.code for m in self.matches(text) if m.kind == DISEASE and not is_negated(text, m)))

    def label(self, code: str) -> str:
        term = self.terms.get(code)
        return term.label if term else code.replace("_", " ")

    def broader_chain(self, code: str) -> list[str]:
        """Return the tag's broader tags, nearest first (cycles are cut)."""
        chain: list[str] = []
        current = self.terms.get(code)
        while current and current.broader and current.broader not in chain and current.broader != code:
            chain.append(current.broader)
            current = self.terms.get(current.broader)
        return chain

    def about_narrower(self, text: str, subjects: set[str], asked: set[str]) -> bool:
        """Return True when `text` is about a narrower group of a condition in `subjects`: device-detected
        subclinical AF for a question on AF. It is when it does not name that condition, or when the first
        condition it names (whom it is stated for) is the narrower group ("for device-detected subclinical AF
        ..., weighing the yearly progression to clinical AF")."""
        named = self.present_in(text)
        mentioned = set(named)
        narrower = [code for code in named if code not in asked and set(self.broader_chain(code)) & subjects]
        return bool(narrower) and (bool(subjects - mentioned) or narrower[0] == named[0])

    def about_sibling(self, text: str, subjects: set[str], asked: set[str]) -> bool:
        """Return True when `text` is about a sibling of a condition in `subjects`, and not about that condition:
        heart failure with reduced ejection fraction for a question on HFpEF (both under heart failure)."""
        mentioned = set(self.present_in(text))
        for subject in subjects - mentioned:
            parent = next(iter(self.broader_chain(subject)), None)
            siblings = [c for c in mentioned if c not in asked and next(iter(self.broader_chain(c)), None) == parent]
            if parent and siblings:
                return True
        return False

    def mesh_for(self, codes: Sequence[str]) -> list[str]:
        ordered: dict[str, None] = {}
        for code in codes:
            for mesh in self.terms[code].mesh_terms if code in self.terms else ():
                ordered.setdefault(mesh, None)
        return list(ordered)

    def tags_for_mesh(self, mesh_terms: Iterable[str], kind: str) -> set[str]:
        """Return the tags of `kind` whose MeSH mappings include any of `mesh_terms`."""
        wanted = {term.lower() for term in mesh_terms}
        return {
            code
            for code, term in self.terms.items()
            if term.kind == kind and wanted.intersection(mesh.lower() for mesh in term.mesh_terms)
        }


# A condition the patient does not have ("no diabetes", "no prior AF", "without CKD", "ischaemia ruled out") is a
# detail of the patient, not the topic; a test reported as a result ("no ctDNA detectable") is not negated.
# The words that say so, and the qualifiers between them and what is absent (`evidence.absent_features` reads a
# patient's absent features with the same two).
NEGATION_CUE = r"(?:no|without|w/o|denies|denied|never\s+had|no\s+history\s+of|negative\s+for|free\s+of)"
NEGATED_QUALIFIER = (
    r"(?:(?:prior|previous|known|significant|major|active|other|evidence\s+of|hx\s+of|history\s+of)\s+)?"
)
_NEGATION_BEFORE = re.compile(rf"\b{NEGATION_CUE}\s+{NEGATED_QUALIFIER}$", re.IGNORECASE)
_NEGATION_AFTER = re.compile(r"^\s*(?:(?:was|is|has been|have been)\s+)?(?:ruled out|excluded)\b", re.IGNORECASE)
_RESULT_AFTER = re.compile(r"^\s*(?:was\s+|is\s+)?(?:detect|positiv|negativ|found|present|\+)", re.IGNORECASE)


def is_negated(question: str, match: TagMatch) -> bool:
    """Return True when a condition is named as absent ("no diabetes", "AF ruled out"): the patient lacks it."""
    if match.kind != DISEASE:
        return False
    after = question[match.end :]
    if _RESULT_AFTER.match(after):
        return False
    return bool(_NEGATION_BEFORE.search(question[: match.start]) or _NEGATION_AFTER.match(after))


MATCH_CACHE_SIZE = 20000


@lru_cache(maxsize=8)
def _vocabulary(terms: tuple[VocabularyTerm, ...], acronyms: frozenset[str]) -> Vocabulary:
    return Vocabulary(terms={term.code: term for term in terms}, acronyms=acronyms)


# The vocabulary last read, by the tag table's digest and the acronyms (`from_terms`) it was read with.
_LOADED: ReadPerChange[Vocabulary] = ReadPerChange()


def load_vocabulary() -> Vocabulary:
    """Return the current vocabulary from the database: one small query while no tag changed since the last
    question (`table_digest`), the tags when one did; curators' edits apply at once."""
    return _LOADED.get((table_digests(Tag._meta.db_table), language.words(language.WordClass.ACRONYM)), _read_tags)


def _read_tags() -> Vocabulary:
    rows = Tag.objects.select_related("broader").only(
        "code", "kind", "label", "synonyms", "mesh_terms", "is_imaging_term", "is_generic", "is_modifier",
        "patient_wordings", "answer_kind", "broader__code",
    )
    return Vocabulary.from_terms(
        VocabularyTerm(
            code=row.code,
            kind=row.kind,
            label=row.label,
            synonyms=tuple(row.synonyms),
            mesh_terms=tuple(row.mesh_terms),
            broader=row.broader.code if row.broader else None,
            is_imaging_term=row.is_imaging_term,
            is_generic=row.is_generic,
            is_modifier=row.is_modifier,
            patient_wordings=tuple(row.patient_wordings),
            answer_kind=row.answer_kind,
        )
        for row in rows
    )


DISEASE = TagKind.DISEASE.value
DECISION = TagKind.DECISION.value
