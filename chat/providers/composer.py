"""The extractive composer: an answer assembled from retrieved evidence, with no language model.

Library key findings come first, then the abstract sentences that best answer the question
(results and conclusions preferred, redundant sentences dropped), grouped under short headings,
each sentence followed by its citation. It says what the evidence does not cover, and abstains
when nothing relevant was found. Every sentence is taken from a source, so every citation is
real by construction; the verifier still checks them like any other answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.answer_settings import AnswerSettings
from chat.prompts import ABSTENTION_NO_EVIDENCE
from chat.services.text import STOPWORDS, stems, tokens
from evidence.citations import ORIGIN_LIBRARY, ORIGIN_RETRIEVED, EvidenceSet, EvidenceSource, split_sentences

_INLINE_LABEL = re.compile(r"(?:^|(?<=[.!?])\s+)([A-Z][A-Z ,&/-]{2,40}):\s+")
_NUMBER = re.compile(r"\d")
SECTION_BONUS = (
    ("conclusion", 0.35),
    ("interpretation", 0.35),
    ("result", 0.25),
    ("finding", 0.25),
    ("background", -0.25),
    ("introduction", -0.25),
    ("objective", -0.25),
    ("purpose", -0.25),
    ("aim", -0.25),
    ("importance", -0.2),
    ("method", -0.2),
    ("design", -0.2),
    ("setting", -0.2),
    ("participant", -0.2),
    ("patients", -0.15),
)
MIN_WORDS, MAX_WORDS = 8, 70
# Verbs of the question itself: never reported as a topic the evidence "does not cover".
QUESTION_VERBS = frozenset(
    [
        "receive",
        "start",
        "stop",
        "give",
        "take",
        "treat",
        "use",
        "prescribe",
        "continue",
        "reduce",
        "improve",
        "prevent",
        "increase",
        "decrease",
        "benefit",
        "manage",
        "choose",
        "offer",
        "avoid",
        "switch",
        "lower",
        "raise",
        "help",
        "work",
        "affect",
        "predict",
        "cause",
        "change",
        "compare",
        "require",
        # question scaffolding: "how long", "how much", "how often"
        "long",
        "much",
        "many",
        "often",
    ]
)


@dataclass(frozen=True)
class Candidate:
    """An abstract sentence that could go into the answer."""

    sentence: str
    source: EvidenceSource
    section: str
    score: float
    words: frozenset[str]

    @property
    def is_conclusion(self) -> bool:
        return any(key in self.section for key in ("conclusion", "interpretation"))


def _marker(source: EvidenceSource) -> str:
    return f"[citation:{source.doc_id}:{source.chunk_id}]"


def _with_citation(sentence: str, source: EvidenceSource) -> str:
    sentence = sentence.strip()
    match = re.search(r"[.!?]+$", sentence)
    if match:
        return f"{sentence[: match.start()]} {_marker(source)}{match.group(0)}"
    return f"{sentence} {_marker(source)}."


def abstract_sentences(text: str, *, section: str = "") -> list[tuple[str, str]]:
    """Return (section label in lower case, sentence) for each sentence of an abstract chunk.

    Labels ("RESULTS: ...") may start a line or follow a sentence inside the chunk; sentences
    before the first label take `section` when the chunk belongs to a single section.
    """
    default = section.lower() if section and "," not in section else ""
    found: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n+", text):
        pieces = _INLINE_LABEL.split(paragraph)
        # split() with one capturing group alternates: text, label, text, label, text...
        label = default
        for index, piece in enumerate(pieces):
            if index % 2 == 1:
                label = piece.strip().lower()
                continue
            found.extend((label, sentence) for sentence in split_sentences(piece.strip()) if sentence)
    return found


def _section_bonus(section: str) -> float:
    return next((bonus for key, bonus in SECTION_BONUS if key in section), 0.0)


def score_sentence(*, sentence: str, section: str, question_terms: Sequence[str], weights: dict[str, float]) -> float:
    """Return how well a sentence answers the question: weighted term coverage plus section and length terms."""
    if not question_terms:
        return 0.0
    present = stems(sentence)
    total = sum(weights.get(term, 1.0) for term in question_terms)
    coverage = sum(weights.get(term, 1.0) for term in question_terms if term in present) / total
    if coverage == 0:
        return 0.0
    words = len(sentence.split())
    score = coverage + _section_bonus(section)
    if _NUMBER.search(sentence):
        score += 0.1
    if words < MIN_WORDS:
        score -= 0.3
    elif words > MAX_WORDS:
        score -= 0.15
    return round(score, 4)


def _content_words(text: str) -> frozenset[str]:
    return frozenset(stems(" ".join(token for token in tokens(text) if token not in STOPWORDS)))


def _select(candidates: list[Candidate], *, taken: list[frozenset[str]], settings: AnswerSettings) -> list[Candidate]:
    chosen: list[Candidate] = []
    per_source: dict[str, int] = {}
    for candidate in sorted(candidates, key=lambda item: (-item.score, item.source.doc_id, item.sentence)):
        if len(chosen) >= settings.composer_sentences:
            break
        if per_source.get(candidate.source.doc_id, 0) >= settings.composer_sentences_per_source:
            continue
        if any(_jaccard(candidate.words, other) >= settings.composer_redundancy for other in taken):
            continue
        chosen.append(candidate)
        taken.append(candidate.words)
        per_source[candidate.source.doc_id] = per_source.get(candidate.source.doc_id, 0) + 1
    return chosen


def _jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def _uncovered_terms(question: str, covered_text: str) -> list[str]:
    """Return the question's topic words (with a following number: "stage 4") that no cited text contains.

    Participles ("skipped", "bleeding") are left out: they are usually verbs of the question,
    and leaving a word out only ever makes the statement more cautious, never false.
    """
    covered = stems(covered_text)
    words = tokens(question)
    missing: dict[str, None] = {}
    for index, token in enumerate(words):
        if (
            token in STOPWORDS
            or token in QUESTION_VERBS
            or len(token) < 4
            or token.isdigit()
            or token.endswith(("ed", "ing"))
        ):
            continue
        if stems(token).isdisjoint(covered):
            following = words[index + 1] if index + 1 < len(words) else ""
            missing.setdefault(f"{token} {following}" if following.isdigit() else token, None)
    return list(missing)


def compose_answer(
    *,
    question: str,
    evidence: EvidenceSet,
    settings: AnswerSettings,
    question_terms: Sequence[str],
    weights: dict[str, float],
) -> str:
    """Return an answer built only from `evidence`, each sentence carrying its [citation:docId:chunkId]."""
    library = [source for source in evidence.sources if source.origin == ORIGIN_LIBRARY and source.approved]
    library = library[: settings.composer_library_findings]
    abstracts = [source for source in evidence.sources if source.origin == ORIGIN_RETRIEVED and source.approved]
    library_docs = {source.doc_id for source in library}

    parts: list[str] = []
    taken: list[frozenset[str]] = []
    covered: list[str] = []
    if library:
        parts.append("### Curated library evidence")
        for source in library:
            sentences = [sentence for sentence in split_sentences(" ".join(source.text.split())) if sentence]
            cited = " ".join(_with_citation(sentence, source) for sentence in sentences)
            label = source.study_name or source.title
            detail = ", ".join(str(part) for part in (source.journal, source.year) if part)
            parts.append(f"- **{label}**{f' ({detail})' if detail else ''}: {cited}")
            taken.append(_content_words(source.text))
            covered.append(f"{source.title} {source.text}")

    candidates = []
    for source in abstracts:
        for section, sentence in abstract_sentences(source.text, section=source.section):
            score = score_sentence(sentence=sentence, section=section, question_terms=question_terms, weights=weights)
            if score <= 0:
                continue
            if source.doc_id in library_docs and section and "conclusion" not in section:
                continue
            candidates.append(
                Candidate(
                    sentence=sentence, source=source, section=section, score=score, words=_content_words(sentence)
                )
            )
    chosen = _select(candidates, taken=taken, settings=settings)
    findings = [candidate for candidate in chosen if not candidate.is_conclusion]
    conclusions = [candidate for candidate in chosen if candidate.is_conclusion]
    for heading, group in (("What the studies found", findings), ("What the authors conclude", conclusions)):
        if group:
            parts.append(f"### {heading}")
            parts.extend(f"- {_with_citation(candidate.sentence, candidate.source)}" for candidate in group)
            covered.extend(f"{candidate.source.title} {candidate.sentence}" for candidate in group)

    if not parts:
        return ABSTENTION_NO_EVIDENCE
    missing = _uncovered_terms(question, " ".join(covered))
    parts.append("### What the evidence does not cover")
    if missing:
        parts.append(
            "The retrieved evidence does not directly address: " + ", ".join(missing) + ". "
            "Weigh these aspects with clinical judgement and the full guideline text."
        )
    else:
        parts.append(
            "These statements summarise the cited sources only; check that the study populations match "
            "your patient before applying them."
        )
    return "\n\n".join(_join_bullets(parts))


def _join_bullets(parts: list[str]) -> list[str]:
    """Keep consecutive bullets in one Markdown list instead of separate paragraphs."""
    joined: list[str] = []
    for part in parts:
        if part.startswith("- ") and joined and joined[-1].startswith("- "):
            joined[-1] += "\n" + part
        else:
            joined.append(part)
    return joined
