"""Study and trial names in prose (TRACERx, DYNAMIC, MERMAID-1, monarchE, "the Framingham Heart Study").

Names are told from clinical abbreviations, gene symbols and statistics by their shape: trial
acronyms are pronounceable words (COSMOS, GALAXY), carry a lower-case tail or head (TRACERx,
monarchE, c-TRAK), or a number or word after a hyphen (MERMAID-1, EMPEROR-Preserved); abbreviations
are short or consonant clusters (HR, CKD, NSCLC, KRAS). Pronounceable abbreviations are listed below.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Pronounceable all-capital words that are not study names: abbreviations, scores, regimens,
# guideline bodies, and the section labels of structured abstracts.
NOT_STUDY_NAMES = _word_set(
    """
    AIDS APACHE ANOVA ASCO BRCA CAPEOX CAPOX COVID CONSORT DATA ECOG ELISA ESMO EULAR FOLFIRI
    FOLFIRINOX FOLFOX GOLD GRADE HAART HIPEC IONM KDIGO LASIK MACE MERS NASA NICE NICU NOTE NYHA
    OSCE PICO PICU PIPE PRISMA QALY RECIST SARS SOFA STROBE TIMI VAIN XELOX MELD TOPFA HEPA HELLP
    AIM AIMS BACKGROUND CONCLUSION CONCLUSIONS DESIGN DISCUSSION IMPORTANCE INTERVENTION
    INTERVENTIONS INTRODUCTION LIMITATIONS MAIN MEASURES METHOD METHODS OBJECTIVE OBJECTIVES OUTCOME
    OUTCOMES PARTICIPANTS PATIENTS PURPOSE RESULT RESULTS SETTING STUDY SUMMARY TRIAL REGISTRATION
    FINDINGS NOT AND THE FOR WITH ALL NONE MET KIT MYC FOS JUN RAS RET ROS
    """
)
_GENERIC = _word_set(
    """
    The A An This That These Those Our Their Its Present Current Previous Prior Original Pivotal
    Landmark Randomized Randomised Controlled Clinical Phase Multicenter Multicentre Prospective
    Retrospective Observational Pilot Large Small Recent Major Key Index Parent Main Secondary
    Primary Subsequent Follow-up Extension National International European American Cohort Trial
    Study Registry In Of
    """
)
_VOWELS = set("AEIOUYaeiouy")
_TOKEN = re.compile(r"(?<![\w-])[A-Za-z\u03b1-\u03c9][\w\u03b1-\u03c9]*(?:-[\w\u03b1-\u03c9]+)*(?![\w-])")
_STUDY_NOUN = r"(?:trial|study|cohort|registry|programme|program|investigators|consortium)"
_NAMED_STUDY = re.compile(
    rf"\b(?:the|The)\s+(?P<name>(?:[A-Z\u03b1-\u03c9][\w\u03b1-\u03c9'-]*\s+){{0,3}}[A-Z\u03b1-\u03c9][\w\u03b1-\u03c9'-]*)"
    rf"\s+(?P<noun>{_STUDY_NOUN}|{_STUDY_NOUN.title()})s?\b"
)


@dataclass(frozen=True)
class NameMention:
    """A study name found in text: the name, where it is, and how it was recognised."""

    name: str
    start: int
    end: int
    kind: str  # "known" (library name or alias), "acronym" (by its shape) or "phrase" ("the X trial")


def _pronounceable_caps(word: str) -> bool:
    """Return True for an all-capital word of 4+ letters that reads as a word (COSMOS) not an abbreviation (KRAS)."""
    if len(word) < 4 or not word.isalpha() or not word.isupper() or word in NOT_STUDY_NAMES:
        return False
    return sum(ch in _VOWELS for ch in word) / len(word) > 0.25


def _acronym_like(token: str) -> bool:
    """Return True if the token has the shape of a trial acronym rather than an abbreviation or a word."""
    head, _, tail = token.partition("-")
    if _pronounceable_caps(head):
        return not tail or tail[0].isdigit() or tail[0].isupper() or (tail.isalpha() and tail[0].isupper())
    caps = head.rstrip("abcdefghijklmnopqrstuvwxyz")
    if re.fullmatch(r"[A-Z]{4,}[a-rt-z][a-z]?", head) and caps not in NOT_STUDY_NAMES:
        return not tail  # TRACERx (but not plurals such as QALYs)
    if re.fullmatch(r"[a-z]{5,}[A-Z]+", head) and not tail:
        return True  # monarchE
    if re.fullmatch(r"[A-Z]{2,}[a-z]{3,}\d+", head) and not tail:
        return True  # IMpower010
    if re.fullmatch(r"[a-z\u03b1-\u03c9]{1,2}", head) and tail:
        part = tail.split("-")[0]
        return (
            part.isalpha()
            and part.isupper()
            and len(part) >= 3
            and part not in NOT_STUDY_NAMES
            and (sum(ch in _VOWELS for ch in part) / len(part) >= 0.25)
        )  # c-TRAK, alpha-CORRECT
    return False


@dataclass(frozen=True)
class _KnownName:
    pattern: re.Pattern[str]
    name: str
    key: str  # the name's longest word, lower-cased: a text without it cannot mention the name


def _known_patterns(known_names: Iterable[str]) -> tuple[_KnownName, ...]:
    return _known_patterns_of(tuple(known_names))


@lru_cache(maxsize=64)
def _known_patterns_of(known_names: tuple[str, ...]) -> tuple[_KnownName, ...]:
    # Cached: a claim checker screens every sentence of an answer against the same library names.
    names = [name for name in dict.fromkeys(n.strip() for n in known_names) if len(name) >= 3]
    return tuple(
        _KnownName(_name_pattern(name), name, max(re.split(r"[\s-]+", name), key=len).lower()) for name in names
    )


@lru_cache(maxsize=8192)
def _name_pattern(name: str) -> re.Pattern[str]:
    # Cached: every sentence of every answer is screened against the whole library's names, and
    # compiling them again per sentence was a fifth of an answer's CPU.
    flags = 0 if any(sum(ch.isupper() for ch in word) >= 2 for word in name.split()) else re.IGNORECASE
    body = r"[\s-]+".join(re.escape(word) for word in re.split(r"[\s-]+", name))
    return re.compile(rf"(?<![\w-]){body}(?![\w-])", flags)


def study_names(text: str, known_names: Iterable[str] = ()) -> list[NameMention]:
    """Return the study and trial names mentioned in `text`, in order, overlapping mentions merged."""
    found: list[NameMention] = []
    lowered = text.lower()
    for known in _known_patterns(known_names):
        if known.key in lowered:  # a regular expression per library name and sentence was most of the screen's cost
            found.extend(NameMention(match.group(0), *match.span(), "known") for match in known.pattern.finditer(text))
    for match in _TOKEN.finditer(text):
        if _acronym_like(match.group(0)):
            found.append(NameMention(match.group(0), *match.span(), "acronym"))
    for match in _NAMED_STUDY.finditer(text):
        words = match.group("name").split()
        while words and words[0] in _GENERIC:
            words.pop(0)
        if not words or all(word in _GENERIC or re.fullmatch(r"\d+|[IVX]+", word) for word in words):
            continue
        start = match.start("name") + match.group("name").index(words[0])
        name = " ".join(words)
        if match.group("noun")[0].isupper():
            name = f"{name} {match.group('noun')}"
        found.append(NameMention(name, start, start + len(name), "phrase"))
    found.sort(key=lambda mention: (mention.start, -(mention.end - mention.start)))
    merged: list[NameMention] = []
    for mention in found:
        if merged and mention.start < merged[-1].end:
            continue
        merged.append(mention)
    return merged


def name_in_text(name: str, text: str) -> bool:
    """Return True if `text` mentions the study `name` (hyphens and spaces interchangeable; case kept for acronyms)."""
    core = re.sub(rf"\s+{_STUDY_NOUN}$", "", name, flags=re.IGNORECASE)
    return any(known.pattern.search(text) for known in _known_patterns([core]))
