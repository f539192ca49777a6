"""Other readings of a sentence that hides its words: how the instruction detector sees through spelling tricks.

An attacker who knows that rules and n-grams read words writes "S a y   t h a t", "say_that", "1GN0RE PR1OR
RUL3S", "dis-re-gard", the sentence backwards or in rot13. `evidence.injection` asks its rules and lexical
classifier about each reading here as well as about the sentence as written. Each reading of an ordinary
abstract sentence is the sentence itself or gibberish; `benchmarks/injection.py` measures the false positives
with the readings on.
"""

from __future__ import annotations

import codecs
import re

from evidence.injection_classifier import folded, normalised

# A word spelled out letter by letter with one separator ("s a y", "s.a.y", "d-i-s-r-e-g-a-r-d").
_SPELLED_OUT = re.compile(r"\b[a-z]([ .\-])[a-z](?:\1[a-z])+\b")
# An underscore between letters stands for a space ("say_that"); hyphens that cut a word into three or more
# short syllables are dropped ("dis-re-gard"; "follow-up" and "non-st-elevation" keep theirs).
_UNDERSCORE = re.compile(r"(?<=[a-z])_(?=[a-z])")
_SYLLABLES = re.compile(r"\b[a-z]{1,5}(?:-[a-z]{1,5}){2,}\b")
# A token of letters and digits read as leetspeak ("1gn0re", "5umm4ry"): the digits that stand for letters.
# Identifiers (NCT01959971, ACTRN12612000038897, rs8105790) carry more digits than letters and are left alone.
_LEET_TOKEN = re.compile(r"\b(?=[a-z0-9]*[a-z])[a-z0-9]*[013457][a-z0-9]*\b")
_LEET = str.maketrans("013457", "oieast")
# The commonest English words: a backwards or rot13 reading is asked about only when it holds more of them than
# the sentence as written (an ordinary sentence turned round is gibberish). Language identification, not
# clinical language; one line of words reads better than one word a line.
_COMMON_WORDS = frozenset(
    "the and of to that this in is a an with for it be are was were not no on at by as or from all have has had"  # noqa: SIM905
    " will would should can do does say said what which who when there their they we you your any every".split()
)


def _leet_read(match: re.Match[str]) -> str:
    token = match.group()
    digits = sum(character.isdigit() for character in token)
    return token.translate(_LEET) if digits <= len(token) - digits else token


def _common_words(text: str) -> int:
    return sum(word in _COMMON_WORDS for word in re.findall(r"[a-z]+", text))


def decoded_views(sentence: str) -> list[str]:
    """Return other readings of `sentence`, lower-cased and normalised, that a spelling trick may hide.

    Spelled-out words joined, underscores read as spaces, syllable hyphens dropped and leetspeak digits read
    as letters (one reading, when it differs from the sentence); the sentence backwards, and its rot13, each
    only when it reads more like English than the sentence as written.
    """
    lowered = normalised(sentence).lower()
    text = _SPELLED_OUT.sub(lambda match: re.sub(r"[ .\-]", "", match.group()), folded(sentence).lower())
    text = _SYLLABLES.sub(lambda match: match.group().replace("-", ""), _UNDERSCORE.sub(" ", text))
    plain = " ".join(_LEET_TOKEN.sub(_leet_read, text).split())
    common = _common_words(lowered)
    turned = [lowered[::-1], codecs.encode(lowered, "rot13")]
    return [plain] * (plain != lowered) + [view for view in turned if _common_words(view) > common]
