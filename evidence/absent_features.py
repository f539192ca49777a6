"""What a question says its patient does not have ("outpt CAP, no comorbidities"), and whether a finding is stated
for patients who do have it ("For outpatients with CAP who have comorbidities, give ...").

Such a finding is for other patients: the guideline's regimen for previously healthy outpatients answers the
question, not the one for outpatients with comorbidities, although the question and that finding share the word.
"""

from __future__ import annotations

import re

from evidence import language
from evidence.language import WordClass
from evidence.matching import form_of
from evidence.vocabulary import NEGATED_QUALIFIER, NEGATION_CUE

# "no comorbidities", "without prior stroke", "no known CAD", "w/o significant CKD": the word named as absent (not a
# result that was not found: "no ctDNA detected").
_ABSENT = re.compile(
    rf"\b{NEGATION_CUE}\s+{NEGATED_QUALIFIER}"
    r"(?P<word>[A-Za-z][\w-]+)(?!\s+(?:was\s+|is\s+)?(?:detect|found|seen))",
    re.IGNORECASE,
)
# A word of these curated classes after "no" says how the question asks ("no benefit", "no more than"), not what the
# patient lacks.
_NOT_FEATURES = (WordClass.GRAMMAR, WordClass.SCAFFOLDING, WordClass.ASKING, WordClass.JUDGING)
# Patients described by what they have: "outpatients with CAP who have comorbidities", "patients with diabetes",
# "adults having prior stroke" (not "patients treated with ...": a treatment given, not a feature of the patient).
_HAVING = re.compile(
    r"\b(?:patients|outpatients|inpatients|adults|people|individuals|those)\s+"
    r"(?:with\s+[\w-]+(?:\s+[\w-]+)?\s+)?(?:with|who\s+have|who\s+had|who\s+has|having)\s+"
    r"(?:(?:any|a|an|one|two|or\s+more|more|prior|known|significant)\s+)*(?P<word>[A-Za-z][\w-]{2,})",
    re.IGNORECASE,
)
# ... or by the condition a recommendation is stated in: "In AF with an annual risk ...", "In AF patients who ...".
_STATED_IN = re.compile(r"\b(?:in|for)\s+(?P<word>[A-Za-z][\w-]+)\s+(?:patients|with|who)\b", re.IGNORECASE)


def _absent(question: str) -> list[re.Match[str]]:
    asking = language.words(*_NOT_FEATURES)
    return [m for m in _ABSENT.finditer(question) if m.group("word").lower() not in asking]


def absent_spans(question: str) -> list[tuple[int, int]]:
    """Return where the question names what its patient does not have ("no high-risk features"): a detail of the
    patient, never a topic an answer must cover."""
    return [(m.start(), m.end("word") + len(_tail(question[m.end("word") :]))) for m in _absent(question)]


def _tail(after: str) -> str:
    """Return the words after an absent word that belong to its noun phrase ("features" of "no high-risk
    features"): at most two, up to punctuation or a grammar word ("in", "with", "and"), which starts another."""
    grammar = language.words(WordClass.GRAMMAR)
    end = 0
    for count, word in enumerate(re.finditer(r"\s+([A-Za-z][\w/-]*)", after)):
        if count == 2 or word.start() != end or word.group(1).lower() in grammar:
            break
        end = word.end()
    return after[:end]


def absent_features(question: str) -> tuple[tuple[str, ...], ...]:
    """Return the stem forms of the words the question names as absent in its patient."""
    return tuple(dict.fromkeys(form for m in _absent(question) if (form := form_of(m.group("word")))))


def fits(absent: tuple[tuple[str, ...], ...], sentence: str) -> bool | None:
    """Return False when `sentence` is stated for patients who have what the question's patient lacks, else None (a
    sentence is never more fitting for not naming it)."""
    if not absent:
        return None
    having = [*_HAVING.finditer(sentence), *_STATED_IN.finditer(sentence)]
    if any(form_of(m.group("word")) in absent for m in having):
        return False
    return None
