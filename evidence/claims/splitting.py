"""Split an answer into claims (sentences and list items with their citation markers) and find dangling fragments.

Sentences are split with the one sentence splitter, `evidence.sentences.split_sentences`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence.claims.numbers import strip_markers
from evidence.sentences import split_sentences

_MARKER = re.compile(
    r"\[\s*(?P<body>citation\s*:[^\[\]\n]{1,300}?|\d{1,3}(?:\s*[,;\u2013-]\s*\d{1,3})*)\s*\]", re.IGNORECASE
)
_LEADING_MARKERS = re.compile(r"^(?:\s*\[[^\[\]\n]{1,300}\])+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|(?:\*\*|__)[^*_]+(?:\*\*|__):?\s*$|[A-Z][A-Za-z /&'-]{0,60}:\s*$)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")
_BOILERPLATE = re.compile(
    r"^\W*(?:references|sources|summary|in summary|key points|bottom line|i hope this helps\b.*|"
    r"(?:please )?(?:consult|talk to|speak with) (?:a|your) (?:doctor|physician|clinician|healthcare).*|"
    r"this (?:is|does) not (?:constitute )?medical advice.*|let me know .*)\W*$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z\u03b1-\u03c9]{2,}")

_DANGLING = [
    ("empty_brackets", re.compile(r"\s*\(\s*[,;:.\s]*\)|\s*\[\s*[,;:.\s]*\]")),
    (
        "empty_identifier",
        re.compile(
            r"\s*\(?\s*(?<![/.])\b(?:PMIDs?|DOI|NCT|PMCID|PMC|PubMed(?:\s+ID)?)\s*[:#=]?\s*(?:\)|(?=[,.;\]](?!\w)|$))",
            re.IGNORECASE | re.MULTILINE,
        ),
    ),
    ("trailing_conjunction", re.compile(r"[ \t,]+(?:and|or)[ \t]*(?=[.;:!?])", re.IGNORECASE)),
    ("dangling_preposition", re.compile(r"[ \t]+(?:in|by|from|see|at|of)[ \t]*(?=[.;!?](?:\s|$))", re.IGNORECASE)),
]
_ORPHAN_POINTER = re.compile(
    r"^\s*(?:see(?:\s+also)?|for (?:more|further) (?:details|information),?\s+see)\b", re.IGNORECASE
)


def plain_text(text: str) -> str:
    """Return `text` without citation markers, markdown emphasis, or the spaces they leave before punctuation."""
    text = re.sub(r"\s+", " ", re.sub(r"[*_`]+", "", strip_markers(text)))
    return re.sub(r" (?=[.,;:!?])", "", text).strip()


@dataclass(frozen=True)
class Claim:
    """One sentence or list item of an answer: its text as written, its span, and the citation markers it carries."""

    text: str
    start: int
    end: int
    citations: tuple[str, ...]
    kind: str  # "sentence" or "list_item"
    dangling: bool = False

    @property
    def plain(self) -> str:
        """Return the claim without citation markers or markdown emphasis."""
        return plain_text(self.text)


@dataclass(frozen=True)
class Fragment:
    """A piece of text left meaningless by a removed identifier: '()', '(PMID: )', a trailing 'and .'."""

    start: int
    end: int
    kind: str
    text: str


def citation_markers(text: str) -> tuple[str, ...]:
    """Return the citations of the markers in `text`: '1', '2' for [1-2]; 'pmid:123:0' for [citation:pmid:123:0]."""
    cited: list[str] = []
    for match in _MARKER.finditer(text):
        body = match.group("body")
        if body.lower().startswith("citation"):
            cited.extend(part.strip() for part in body.split(":", 1)[1].split(",") if part.strip())
            continue
        for part in re.split(r"\s*[,;]\s*", body):
            bounds = [int(b) for b in re.split(r"\s*[\u2013-]\s*", part) if b.isdecimal()]
            if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < 20:
                cited.extend(str(n) for n in range(bounds[0], bounds[1] + 1))
            else:
                cited.extend(str(n) for n in bounds)
    return tuple(dict.fromkeys(cited))


def _is_pointer_without_target(sentence: str) -> bool:
    return (
        bool(_ORPHAN_POINTER.match(sentence))
        and not _MARKER.search(sentence)
        and not re.search(r"\b(?:PMID|DOI|NCT|PMC)\s*:?\s*\w", sentence, re.IGNORECASE)
    )


def split_claims(text: str) -> list[Claim]:
    """Return an answer's sentences and list items with spans and markers; headings and boilerplate are skipped."""
    claims: list[Claim] = []
    offset = 0
    in_code = False
    for line in text.split("\n"):
        line_start, offset = offset, offset + len(line) + 1
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line.strip() or _HEADING.match(line) or line.lstrip().startswith("|"):
            continue
        item = _LIST_ITEM.match(line)
        kind = "list_item" if item else "sentence"
        cursor = item.end() if item else 0
        for sentence in split_sentences(line[cursor:]):
            found = line.find(sentence, cursor)
            start = line_start + (found if found >= 0 else cursor)
            cursor = (found if found >= 0 else cursor) + len(sentence)
            leading = _LEADING_MARKERS.match(sentence)
            if leading and claims and claims[-1].end <= start:
                # "… reduced relapse. [2] Next sentence": the marker belongs to the sentence before.
                previous = claims[-1]
                markers = leading.group(0)
                claims[-1] = Claim(
                    text[previous.start : start + len(markers)],
                    previous.start,
                    start + len(markers),
                    tuple(dict.fromkeys(previous.citations + citation_markers(markers))),
                    previous.kind,
                    previous.dangling,
                )
                sentence, start = sentence[len(markers) :].lstrip(), start + len(markers)
                start = text.find(sentence, start) if sentence else start
            plain = re.sub(r"[*_`]+", "", strip_markers(sentence))
            if len(_WORD.findall(plain)) < 2 or _BOILERPLATE.match(plain):
                continue
            claims.append(
                Claim(
                    sentence,
                    start,
                    start + len(sentence),
                    citation_markers(sentence),
                    kind,
                    _is_pointer_without_target(sentence),
                )
            )
    return claims


def dangling_fragments(text: str) -> list[Fragment]:
    """Return the fragments of `text` left meaningless by removed identifiers or names, in order."""
    fragments = [
        Fragment(*match.span(), kind, match.group(0))
        for kind, pattern in _DANGLING
        for match in pattern.finditer(text)
        if match.group(0).strip()
    ]
    fragments.extend(
        Fragment(claim.start, claim.end, "pointer_without_target", claim.text)
        for claim in split_claims(text)
        if claim.dangling
    )
    fragments.sort(key=lambda fragment: (fragment.start, -fragment.end))
    kept: list[Fragment] = []
    for fragment in fragments:
        if kept and fragment.start < kept[-1].end:
            if fragment.end > kept[-1].end:
                kept[-1] = Fragment(kept[-1].start, fragment.end, kept[-1].kind, text[kept[-1].start : fragment.end])
            continue
        kept.append(fragment)
    return kept


def remove_dangling(text: str) -> str:
    """Return `text` with its dangling fragments removed and the spacing around them repaired."""
    pieces, cursor = [], 0
    for fragment in dangling_fragments(text):
        pieces.append(text[cursor : fragment.start])
        cursor = fragment.end
    pieces.append(text[cursor:])
    cleaned = "".join(pieces)
    cleaned = re.sub(r"[ \t]+(?=[.,;:!?])", "", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    return re.sub(r"[ \t]+$", "", cleaned, flags=re.MULTILINE).strip()
