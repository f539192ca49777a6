"""What a question asks for (a drug, a dose, a duration, a timing, a threshold) and whether a sentence states it.

The composer leads with a sentence that states what was asked, and says plainly what no cited sentence
states; confidence names the same gaps. Both read these patterns, so they cannot disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evidence.concepts import DECISION_ROLE, Concept, TextIndex
from evidence.kidney_function import Range, fits
from evidence.lexicon import Lexicon
from evidence.sentences import asking_part, split_sentences

# What a question can ask for, and how a sentence states it.
ASKS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "drug": (
        re.compile(
            r"\b(?:which|what|best|preferred|first[- ]line|choice of)\s+(?:\w+\s+){0,2}(?:drug|agent|medication|"
            r"anticoagulant|antibiotic|antiplatelet|antihypertensive|regimen|treatment)s?\b|\bdrug of choice\b",
            re.IGNORECASE,
        ),
        re.compile(
            r"\b\w+(?:xaban|gatran|parin|farin|statin|pril|sartan|olol|dipine|mab|nib|cillin|mycin|floxacin|azole|"
            r"cycline|gliflozin|gliptin|glutide|formin|sone|olone|amide|azepam|prazole|tidine|vir)\b|\baspirin\b|"
            r"\bwarfarin\b|\bmetformin\b|\binsulin\b"
            # A drug class named by its action ("an SGLT2 inhibitor", "a beta-blocker", "GLP-1 receptor agonists").
            r"|\b[\w-]+[- ](?:inhibitors?|antagonists?|blockers?|agonists?)\b",
            re.IGNORECASE,
        ),
    ),
    "dose": (
        # "how much apixaban", "how much should I give" ask for a dose; "how much extra bleeding" asks for a size.
        re.compile(
            r"\b(?:dose|doses|dosing|dosage|mg)\b|\bhow much\b(?=\s*[?]|\s*$|\s+(?:\w+(?:xaban|gatran|parin|farin|"
            r"mab|cillin|mycin|floxacin)\b|should|to give|to use|do (?:i|you|we) give|is (?:safe|enough|needed)))"
            # A choice between two amounts of a drug, or one amount asked about: "apixaban 2.5 or 5?", "apixaban 5 or
            # 2.5 mg bid?", "is rivaroxaban 15 ok?" (not the regimen a patient is on: "on rivaroxaban 20, melena").
            r"|\b\w+(?:xaban|gatran|parin|farin|mab|cillin|mycin|floxacin|gliflozin|statin|pril|sartan|olol)\s+"
            r"\d+(?:\.\d+)?\s*(?:mg\s*)?(?:(?:or|vs\.?|versus)\s*\d+(?:\.\d+)?\b|(?:(?:bid|od|daily|twice daily|once "
            r"daily)\s*)?(?:\?|(?:ok|okay|enough|safe|right|correct|appropriate|fine|too (?:much|high|low))\b))",
            re.IGNORECASE,
        ),
        # A concentration or ratio ("ACR 200 mg/g", "Hb 2 g/dL", "eGFR 30 mL/min") is a measurement, not a dose.
        re.compile(
            r"\b\d+(?:\.\d+)?\s?(?:mg|g|mcg|µg|μg|units?|IU|mL|mmol)(?:/kg)?(?!/(?i:g|dl|l|mmol|ml|min)\b)\b"
            r"|\b(?:dose|dosed)\b[^.]{0,40}\d"
        ),
    ),
    "duration": (
        re.compile(
            r"\bhow (?:long|short)\b|\bduration\b|\bhow many (?:days|weeks|months)\b"
            r"|\blength of (?:treatment|therapy)\b",
            re.IGNORECASE,
        ),
        # "within 6 months" bounds when something happened ("bleeding within 6 months" in a list of criteria), and
        # says nothing of how long to treat.
        re.compile(
            r"(?<!\bwithin )\b\d+\s?(?:(?:to|-|\u2013)\s?\d+\s?)?(?:days?|weeks?|months?|years?|hours?)\b",
            re.IGNORECASE,
        ),
    ),
    "timing": (
        re.compile(
            # "when is azithromycin alone still OK?" asks in which patients, not at what time ("when is it safe to
            # restart?" does).
            r"(?:^\W*|[-,;:\u2013\u2014]\s*|\band\s+)when\b"
            r"(?!\s+(?:is|are)\b(?!\s+(?:it|there)\b)(?:\s+[\w-]+){0,4}?\s+(?:ok|okay|fine|safe|appropriate|acceptable|"
            r"reasonable|indicated|contraindicated|enough|sufficient|an option)\b)"
            r"|\bwhen\s*\?|\b(?:how soon|how early|timing)\b"
            r"|\bhow many (?:days|weeks) (?:after|before)\b",
            re.IGNORECASE,
        ),
        re.compile(
            r"\b(?:same|next) day\b|\b\d+\s?(?:(?:to|-|\u2013)\s?\d+\s?)?(?:hours?|days?|weeks?|months?) "
            r"(?:after|before|from|post|following)\b|\bwithin \d+\s?(?:hours?|days?|weeks?)\b|\bonce (?:endoscopic )?"
            r"ha?emostasis\b|\bday (?:that|when) (?:endoscopic )?ha?emostasis\b",
            re.IGNORECASE,
        ),
    ),
    "threshold": (
        re.compile(r"\b(?:threshold|cut-?off|target|at what (?:level|value|number))\b", re.IGNORECASE),
        re.compile(r"(?:≥|≤|>=|<=|>|<|\babove\b|\bbelow\b|\bat least\b|\bless than\b|\bgreater than\b)\s?\d"),
    ),
}
ASK_WORDS = {
    "drug": "which drug",
    "dose": "a dose",
    "duration": "a treatment duration",
    "timing": "the timing",
    "threshold": "a threshold",
}


# A question opening with an auxiliary verb ("Do we need abx ...?", "CAP - should I add a macrolide?") asks whether.
_WHETHER = re.compile(
    r"(?:^\W*|[-,;:\u2013\u2014]\s+)(?:do|does|did|should|shall|is|are|can|could|will|would|must|may)\b", re.IGNORECASE
)


# The follow-up time a question names ("still holds at 5 yrs?", "OS at 3 years"): a finding reported at that time
# answers it before one reported at another.
_TIME_POINT = re.compile(
    r"\b(?:at|after|by|beyond|through)\s+(\d{1,2})[\s-]?(?:(y|yrs?|years?)|(mos?|months?))\b", re.IGNORECASE
)


def time_points(question: str) -> list[tuple[int, str]]:
    """Return the follow-up times the question names, as (number, "year" or "month")."""
    return [(int(m.group(1)), "year" if m.group(2) else "month") for m in _TIME_POINT.finditer(question)]


def states_time_point(point: tuple[int, str], sentence: str) -> bool:
    """Return True when `sentence` reports a result at `point` ("5-year", "5 years", "60 months" for 5 years)."""
    number, unit = point
    if unit == "year":
        pattern = rf"\b{number}[\s-]?(?:years?|yrs?|y)\b|\b{number * 12}[\s-]?months?\b"
    else:
        pattern = rf"\b{number}[\s-]?(?:months?|mos?)\b"
    return bool(re.search(pattern, sentence, re.IGNORECASE))


def asked_for(question: str, lexicon: Lexicon | None = None, concepts: Sequence[Concept] = ()) -> list[str]:
    """Return what the question's asking sentences ask for among drug, dose, duration, timing and threshold, in
    the order the question asks them ("which regimen, and for how long?": the drug first).

    With the question's `lexicon`, its shorthand is read spelled out as well: "which abx?" asks for a drug as
    "which antibiotic?" does. A question that asks in none of these words, and whose decisions all ask for a kind
    of answer (`concepts`, their tags' `answer_kind`), asks for that: "CAP in the ICU: empirical antibiotics?" names
    only the drug-choice decision, and asks which drug; "stop abx after day 5?" is about stopping them, "does
    dapagliflozin benefit ...?" names its drug, and "do we need prophylactic abx ...?" asks whether.
    """
    asked = asking_part(question)
    readings = [asked, lexicon.spelled_inline(asked)] if lexicon else [asked]
    where = {
        kind: min(found.start() for found in matches)
        for kind, (asks, _) in ASKS.items()
        if (matches := [found for reading in readings if (found := asks.search(reading))])
    }
    decisions = [c for c in concepts if c.role == DECISION_ROLE]
    implied = all(c.answer_kind and not states(c.answer_kind, c.label) for c in decisions)
    if not where and decisions and implied and not _WHETHER.search(asked):
        return list(dict.fromkeys(c.answer_kind for c in decisions))
    return sorted(where, key=lambda kind: where[kind])


def states(kind: str, sentence: str) -> bool:
    """Return True when `sentence` states the `kind` of answer (a drug name, a dose, a duration, a threshold)."""
    return bool(ASKS[kind][1].search(sentence))


# A sentence that leans on the one before it ("Of these, 250 turned positive") is never moved before it.
_LEANS_BACK = re.compile(r"^(?:of )?(?:this|these|those|they|them|it|such|its|their)\b", re.IGNORECASE)


def asked_first(text: str, asks: Sequence[str], kidney: Range | None = None) -> str:
    """Return a finding of several sentences with the sentence that states most of what was asked first.

    "dose and for how long?" after an IMvigor011 question is answered by the finding's second sentence
    ("randomised to atezolizumab 1680 mg ... every 4 weeks for up to 1 year"); its first reports the survival
    result. A sentence stated only for other kidney function than the patient's (`kidney`) is not moved, and of
    two that state as much, the one stated for the patient's comes first. The other sentences follow in their
    order; a text whose first sentence states as much is unchanged.
    """
    sentences = split_sentences(text)
    if len(sentences) < 2 or not asks:
        return text
    counts = [sum(states(kind, sentence) for kind in asks) for sentence in sentences]
    fitted = [fits(kidney, sentence) for sentence in sentences]
    best = max(range(len(sentences)), key=lambda i: (fitted[i] is not False, counts[i], fitted[i] is True, -i))
    if counts[best] <= counts[0] or fitted[best] is False or _LEANS_BACK.match(sentences[best]):
        return text
    if fitted[0] is True and fitted[best] is not True:
        return text  # the first sentence is stated for the patient's kidney function; the other may not be
    return " ".join([sentences[best], *sentences[:best], *sentences[best + 1 :]])


def on_decisions(sentence: str, decisions: Sequence[Concept]) -> bool:
    """Return True when `sentence` speaks to one of the question's `decisions` (or there are none): it names one or
    states the kind of answer one asks for ("12 months" for how long; naming any drug answers no "which drug")."""
    if not decisions:
        return True
    index, kinds = TextIndex(sentence), {c.answer_kind for c in decisions} - {"", "drug"}
    return any(index.covers(c) for c in decisions) or any(states(kind, sentence) for kind in kinds)


def answers(kind: str, sentence: str, concepts: Sequence[Concept] = ()) -> bool:
    """Return True when `sentence` states the `kind` asked for about the question's own decision.

    "Restart apixaban after a GI bleed - when?" is not answered by when to restart aspirin: a sentence that
    states a timing must also be about a decision the timing is asked of (a decision concept of the question
    that is not itself a kind of answer, such as "dose" or "restart", nor a generic one). One is enough: a case that
    names a score, a past bleed and anticoagulation, and asks "which agent", is answered by "choose a DOAC rather
    than warfarin" in anticoagulation, which says nothing of the score or the bleed.
    """
    if not states(kind, sentence):
        return False
    subjects = treatments_asked(concepts)
    return about_treatment(sentence, subjects) if subjects else True


def treatments_asked(concepts: Sequence[Concept]) -> list[Concept]:
    """Return the question's decisions a kind of answer is asked of: neither a kind of answer itself ("dose",
    "restart") nor generic (treatment, drug choice, risk stratification: `Tag.is_generic`, which say how the question
    asks, not what about - "CHA2DS2-VASc 3, which anticoagulant?" is about anticoagulation)."""
    return [c for c in concepts if c.role == DECISION_ROLE and c.code and not c.answer_kind and not c.generic]


def about_treatment(sentence: str, treatments: Sequence[Concept]) -> bool:
    """Return True when `sentence` names one of `treatments` (`treatments_asked`)."""
    index = TextIndex(sentence)
    return any(index.covers(treatment) for treatment in treatments)
