"""Display names of tag codes: what a page shows for `post_surgical_mrd` or `hfpef`, never the code itself."""

from __future__ import annotations

from collections.abc import Iterable

from evidence.models import Tag

# Abbreviations whose usual spelling is not all capitals.
_SPELLINGS = {"ctdna": "ctDNA", "cfdna": "cfDNA", "hfpef": "HFpEF", "hfref": "HFrEF", "sglt2": "SGLT2", "egfr": "eGFR"}
_VOWELS = set("aeiouy")


def humanize_tag(code: str) -> str:
    """Return a readable name for a tag code no vocabulary entry names ("post_surgical_mrd" → "Post-surgical MRD").

    Words without vowels are abbreviations and are written in capitals (mrd → MRD, ckd → CKD).
    """
    words = [word for word in code.replace("-", "_").split("_") if word]
    shown = []
    for index, word in enumerate(words):
        lower = word.lower()
        if lower in _SPELLINGS:
            shown.append(_SPELLINGS[lower])
        elif not _VOWELS & set(lower) and lower.isalnum():
            shown.append(lower.upper())
        else:
            shown.append(lower.capitalize() if index == 0 else lower)
    text = " ".join(shown)
    # "post surgical" and "de escalation" read as the hyphenated words they are.
    for prefix in ("Post", "Pre", "De", "Re", "Non", "Anti", "post", "pre", "non", "anti"):
        text = text.replace(f"{prefix} ", f"{prefix}-", 1) if text.startswith(f"{prefix} ") else text
    return text


def tag_label(code: str, labels: dict[str, str]) -> str:
    """Return the curated label of `code` with a capital first letter, else its humanized form."""
    label = labels.get(code, "")
    return label[:1].upper() + label[1:] if label else humanize_tag(code)


def tag_labels(codes: Iterable[str] | None = None) -> dict[str, str]:
    """Return {code: display name} for `codes` (every vocabulary tag when None), from the curated labels."""
    queryset = Tag.objects.all() if codes is None else Tag.objects.filter(code__in=list(codes))
    labels = dict(queryset.values_list("code", "label"))
    wanted = labels.keys() if codes is None else codes
    return {code: tag_label(code, labels) for code in wanted}
