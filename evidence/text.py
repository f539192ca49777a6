"""Small, deterministic text helpers shared by question understanding and the extractive composer."""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from evidence import injection, injection_classifier
from evidence.injection import is_instruction, is_role_marker

_TOKEN = re.compile(r"[A-Za-z0-9]+")
_SUFFIXES = (
    "ations",
    "ation",
    "ating",
    "ated",
    "ates",
    "ate",
    "ments",
    "ment",
    "ants",
    "ant",
    "ings",
    "ing",
    "ies",
    "ed",
    "es",
    "s",
)

# Words that carry no topic: question scaffolding and generic clinical words.
_STOPWORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers how i if in into is it its itself just me more most my no nor
    not now of off on once only or other our out over own same she should so some such than that the
    their them then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours
    patient patients people person adult adults man woman men women year years old case cases
    evidence study studies data recommend recommended recommends recommendation recommendations
    guideline guidelines best current currently use using used give given consider considered
    tell know need needs role value according versus vs compared effect effects
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


# Roman numerals as written for stages, phases, grades and classes ("stage III", "phase IV", "FC II").
ROMAN_NUMERALS = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6}


def roman_value(word: str) -> int | None:
    """Return the value of a Roman numeral from I to VI in either case, or None for any other word."""
    return ROMAN_NUMERALS.get(word.lower())


def tokens(text: str) -> list[str]:
    """Return the lower-cased alphanumeric tokens of `text` (hyphenated words split)."""
    return [token.lower() for token in _TOKEN.findall(text)]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return a crude stem: common English suffixes removed, keeping at least four characters."""
    # Cached: judging an answer's candidates stems every word of their abstracts, mostly the same words.
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    # "improve"/"improved", "disease"/"diseases" share a stem.
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def content_terms(text: str) -> list[str]:
    """Return the stems of the topic words of `text`, in order, without duplicates."""
    seen: dict[str, None] = {}
    for token in tokens(text):
        if token in STOPWORDS or len(token) < 2 or token.isdigit():
            continue
        seen.setdefault(stem(token), None)
    return list(seen)


def stems(text: str) -> set[str]:
    return {stem(token) for token in tokens(text)}


# Words ending in a full stop that do not end a sentence.
_ABBREVIATIONS = frozenset(
    [
        "al.",
        "e.g.",
        "i.e.",
        "vs.",
        "approx.",
        "fig.",
        "no.",
        "dr.",
        "cf.",
        "incl.",
        "ca.",
        "st.",
        "et.",
        "resp.",
        "ref.",
        "refs.",
        "ed.",
        "eds.",
        "vol.",
        "pp.",
    ]
)
# A sentence ends at . ! or ? followed by white space and something that can start a sentence.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[\"'\u27e6*_#-])")
# Citation markers written after the full stop ("... worked. [1]") belong to the sentence before.
_LEADING_MARKERS = re.compile(r"^((?:(?:\u27e6\d+\u27e7|\[\d{1,3}(?:\s*[,;\u2013-]\s*\d{1,3})*\])\s*)+)")


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping "et al.", "e.g.", initials and decimals inside them.

    The one splitter for abstracts (chunking), answers (citation verification) and the composer.
    A citation marker written after a sentence's full stop stays with that sentence.
    """
    pieces: list[str] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        before = text[start : boundary.start()]
        last_word = before.rsplit(None, 1)[-1].lower() if before.strip() else ""
        if last_word in _ABBREVIATIONS or re.fullmatch(r"\(?[a-z]\.", last_word):
            continue
        pieces.append(before)
        start = boundary.end()
    pieces.append(text[start:])
    sentences: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece)
        if lead and sentences:
            sentences[-1] = f"{sentences[-1]} {lead.group(1).strip()}"
            piece = piece[lead.end() :]
        if piece.strip():
            sentences.append(piece.strip())
    return sentences


# A structured abstract's section label ("RESULTS: ..."), which belongs to the line, not to its first sentence.
_SECTION_LABEL = re.compile(r"^([A-Z][A-Z ,&/-]{2,40}):\s+")


def _labelled(line: str) -> tuple[str, str]:
    """Return (label prefix, rest) of a line; a role marker ("SYSTEM:") is no section label and stays."""
    match = _SECTION_LABEL.match(line)
    if match is None or is_role_marker(match.group(0)):
        return "", line
    return match.group(0), line[match.end() :]


def instruction_sentences(text: str) -> list[str]:
    """Return the sentences of `text` that give instructions to a language model (`evidence.injection`)."""
    return [
        sentence
        for line in text.splitlines()
        for sentence in split_sentences(_labelled(line)[1])
        if is_instruction(sentence)
    ]


def without_instructions(text: str) -> str:
    """Return `text` without the sentences that give instructions to a language model, lines kept.

    A stored abstract, a library field, a trial record or a tool result that carries such a sentence is
    data; the sentence is dropped so that neither the reader, the model nor the support check sees it.
    A text the store screened under the current `screening_version` and found free of them
    (`remember_screened`) is returned as it is without being read again.
    """
    if text in _SCREENED_FREE:
        return text
    return _without_instructions(text)


@lru_cache(maxsize=8192)
def _without_instructions(text: str) -> str:
    if not text:
        return text
    lines = []
    for line in text.splitlines():
        label, body = _labelled(line)
        sentences = split_sentences(body)
        kept = [sentence for sentence in sentences if not is_instruction(sentence)]
        if len(kept) == len(sentences):
            lines.append(line)
        elif kept:
            lines.append(label + " ".join(kept))
    return "\n".join(lines)


@lru_cache(maxsize=1)
def screening_version() -> str:
    """Return a fingerprint of everything `without_instructions` depends on: this module (sentence splitting),
    the detector's rules and code, and its trained weights. A text screened under another version is read again."""
    digest = hashlib.sha256()
    modules = (sys.modules[__name__], injection, injection_classifier)
    model = injection_classifier.MODEL_DIR
    for path in (*(Path(str(module.__file__)) for module in modules), model / "weights.npz", model / "metadata.json"):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def screened_version(*texts: str) -> str:
    """Return `screening_version()` when every one of `texts` is free of instructions, else "" (what the
    store records on a chunk, so that answers need not screen it again)."""
    return screening_version() if all(_without_instructions(text) == text for text in texts) else ""


# Texts the store screened under the current version and found free of instructions (a bounded memo,
# filled from stored chunks as they are read: screening every retrieved chunk again was a fifth of an answer).
_SCREENED_FREE: dict[str, None] = {}
_SCREENED_FREE_SIZE = 16384
_screened_lock = threading.Lock()


def remember_screened(texts: Iterable[str], version: str) -> None:
    """Record `texts` as free of instructions when `version` is the current `screening_version()`."""
    if version != screening_version():
        return
    with _screened_lock:
        for text in texts:
            if len(_SCREENED_FREE) >= _SCREENED_FREE_SIZE:
                del _SCREENED_FREE[next(iter(_SCREENED_FREE))]
            _SCREENED_FREE[text] = None


# The shapes of drug names (INN stems) and of intervention nouns, for questions whose intervention
# the tag vocabulary does not know ("semaglutide", "RSV vaccine", "decompressive surgery").
DRUG_NAME = re.compile(
    r"\b[a-z]{3,}(?:mab|tinib|ciclib|parib|rafenib|lisib|zomib|platin|taxel|rubicin|gliflozin|gliptin|glutide|"
    r"sartan|pril|olol|dipine|statin|xaban|gatran|parin|prazole|floxacin|cillin|mycin|cycline|azole|vir|"
    r"tide|lukast|tropium|terol|sone|solone|idronate|dronate|coxib|setron|triptan|oxetine|azepam|semide|thiazide)s?\b",
    re.IGNORECASE,
)
_INTERVENTION_NOUN = re.compile(
    r"\b(?:vaccin\w*|surgery|surgical|resection|transplant\w*|therapy|stent\w*|ablation|radiotherapy|"
    r"chemotherapy|immunotherapy|screening|exercise|training|diet|supplement\w*|infusion|injection|"
    r"oxygen|dialysis|implant\w*|reduction|repair|bypass|drug|drugs|antibiotics?|abx|statins?|anticoagula\w*|"
    r"antiplatelets?|inhibitors?|blockers?|agonists?|antagonists?|steroids?|corticosteroids?|insulin|aspirin)\b",
    re.IGNORECASE,
)
# Words that name a disease or condition by their shape or head noun ("obesity", "apnoea", "fracture").
_DISEASE_WORD = re.compile(
    r"\b(?:\w+(?:osis|itis|aemia|emia|oma|pathy|plasia|algia|uria|ity)|cancer|carcinoma|disease|disorder|"
    r"syndrome|failure|fracture|infection|apnoea|apnea|diabetes|hypertension|stroke|pneumonia|sepsis|"
    r"fibrillation|injury|pregnancy|asthma|copd|dementia|depression|ulcer|bleeding|haemorrhage|hemorrhage|"
    r"thrombosis|embolism|metastas\w+|mets|fasciitis|stenosis|hernia|reflux|warts?|scabies|virus|rsv)\b",
    re.IGNORECASE,
)


def is_intervention(phrase: str) -> bool:
    """Return True when `phrase` reads as a drug or an intervention."""
    return bool(DRUG_NAME.search(phrase) or _INTERVENTION_NOUN.search(phrase))


def is_disease(phrase: str) -> bool:
    """Return True when `phrase` reads as a disease or condition."""
    return bool(_DISEASE_WORD.search(phrase))


_POPULATION_WORD = re.compile(
    r"\b(?:child|children|kids?|paediatric|pediatric|infants?|neonates?|newborns?|adolescents?|teenagers?|"
    r"elderly|older|geriatric|pregnan\w*|women|men|males?|females?|adults?)\b",
    re.IGNORECASE,
)


def is_population(phrase: str) -> bool:
    """Return True when `phrase` names who the patients are (children, older adults, pregnancy)."""
    return bool(_POPULATION_WORD.search(phrase))
