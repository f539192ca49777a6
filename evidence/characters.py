"""Characters that show as nothing: one definition for every reader of typed or stored text."""

from __future__ import annotations

import re

# Invisible characters (zero-width spaces and joiners, soft hyphens, direction marks, byte-order marks: Unicode
# category Cf) can split a word or an identifier so that a pattern misses it while a reader still sees it.
INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")


def strip_invisible(text: str) -> str:
    """Remove characters that show as nothing but can hide a word or an identifier from a pattern."""
    return INVISIBLE.sub("", text)
