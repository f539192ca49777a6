"""The golden question sets `manage.py evaluate` answers, and how an answer is read against them.

Two sets live in `chat/golden/`: `questions.json` (MRD oncology, the six anchor scenarios, stored
PubMedQA abstracts asked in a clinician's words, must-abstain questions) and `clinician.json`
(clinical shorthand, case vignettes over 100 words, follow-ups that need their conversation, and
questions outside the library). A clinician question may also say what the answer's first sentence
must state and which of its words must never be listed as missing; a quarter of that set is marked
`held_out` and is only read to report figures, never to tune.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evidence import identifiers
from evidence.sentences import split_sentences

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "golden"
GOLDEN_PATH = GOLDEN_DIR / "questions.json"
CLINICIAN_PATH = GOLDEN_DIR / "clinician.json"


class GoldenError(ValueError):
    """The golden-question file is missing or malformed."""


class GoldenQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    scenario: str = Field(min_length=1)
    question: str = Field(min_length=2)
    expected: list[str] = Field(default_factory=list, description="Identifiers a good answer cites: pmid:/doi:/nct:")
    acceptable: list[str] = Field(
        default_factory=list, description="Other identifiers that address the question (cited without harm)"
    )
    forbidden: list[str] = Field(default_factory=list, description="Identifiers that do not address the question")
    expect_abstain: bool = False
    kind: Literal["short", "vignette", "follow_up", "outside", ""] = ""
    split: Literal["dev", "held_out", ""] = ""
    follow_up_of: str = Field(default="", description="The id of the question asked before this one")
    first_sentence: list[str] = Field(
        default_factory=list,
        description="What the first sentence must state: each item one requirement, '|' between wordings",
    )
    never_missing: list[str] = Field(
        default_factory=list, description="Question words that must never be listed as not covered"
    )
    note: str = ""

    @field_validator("expected", "acceptable", "forbidden")
    @classmethod
    def _identifiers(cls, values: list[str]) -> list[str]:
        cleaned = []
        for value in values:
            kind, _, raw = value.partition(":")
            valid = {"pmid": identifiers.is_pmid, "doi": identifiers.is_doi, "nct": identifiers.is_nct}.get(kind)
            if valid is None or not valid(raw):
                raise ValueError(f"{value!r} is not pmid:<PMID>, doi:<DOI> or nct:<NCT id>")
            cleaned.append(f"doi:{identifiers.doi_key(raw)}" if kind == "doi" else value)
        return cleaned


class StoredAbstracts(BaseModel):
    """Abstracts the store must hold for the out-of-library questions: PubMedQA PMIDs, loaded before the run."""

    model_config = ConfigDict(extra="forbid")

    corpus: Literal["pubmedqa"]
    pmids: list[str] = Field(min_length=1)

    @field_validator("pmids")
    @classmethod
    def _pmids(cls, values: list[str]) -> list[str]:
        bad = [value for value in values if not identifiers.is_pmid(value)]
        if bad:
            raise ValueError(f"not PMIDs: {', '.join(bad[:5])}")
        return values


class GoldenSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    description: str = ""
    questions: list[GoldenQuestion]
    stored_abstracts: StoredAbstracts | None = None


def load_golden_set(path: Path | None = None) -> GoldenSet:
    """Read and validate a golden file (questions and the abstracts they need); raise GoldenError."""
    path = path or GOLDEN_PATH
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise GoldenError(f"Golden-question file not found: {path}") from exc
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno}).") from exc
    try:
        golden = GoldenSet.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        raise GoldenError(f"{path} is not a valid golden set: {problems}") from exc
    ids = [question.id for question in golden.questions]
    duplicates = sorted({value for value in ids if ids.count(value) > 1})
    if duplicates:
        raise GoldenError(f"{path} repeats question ids: {', '.join(duplicates)}")
    for position, question in enumerate(golden.questions):
        if question.follow_up_of and question.follow_up_of not in ids[:position]:
            raise GoldenError(
                f"{path}: {question.id} follows up {question.follow_up_of!r}, which is not asked before it"
            )
    return golden


def conversation(question: GoldenQuestion, questions: list[GoldenQuestion]) -> list[str]:
    """Return the earlier questions of `question`'s conversation, first asked first."""
    by_id = {item.id: item for item in questions}
    earlier: list[str] = []
    current = question
    while current.follow_up_of and current.follow_up_of in by_id and len(earlier) < 10:
        current = by_id[current.follow_up_of]
        earlier.insert(0, current.question)
    return earlier


# How an answer is read: its first sentence (after "Bottom line:" and a study's label), and the parts it
# says no source covers ("What the evidence does not cover", an abstention's "Nothing stored here addresses").
_BOTTOM = re.compile(r"\*\*Bottom line:\*\*\s*")
_LABEL = re.compile(r"^\*\*[^*]{2,160}\*\*\s*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?:\s*")
_GAPS = re.compile(
    r"(?:do not address|does not address|does not cover|do not cover|Nothing stored here addresses)\s+(.+?)"
    r"(?:;|, and the live|\. |\.$|$)",
    re.MULTILINE,
)


def first_sentence(answer: str) -> str:
    """Return the answer's first sentence, without markdown, the "Bottom line:" lead or a study's label."""
    text = answer.strip()
    lead = _BOTTOM.search(text)
    if lead:
        text = text[lead.end() :]
    text = _LABEL.sub("", text.split("\n", 1)[0].strip()).replace("**", "")
    return next(iter(split_sentences(text)), "").strip()


def unmet_requirements(sentence: str, requirements: list[str]) -> list[str]:
    """Return the requirements (each "wording|other wording") that `sentence` states in none of their wordings."""
    lowered = sentence.lower()
    return [item for item in requirements if not any(w.strip().lower() in lowered for w in item.split("|") if w)]


def listed_as_missing(answer: str, words: list[str]) -> list[str]:
    """Return the `words` the answer lists as not covered (case-blind, whole words)."""
    listed = " | ".join(match.group(1) for match in _GAPS.finditer(answer))
    return [word for word in words if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", listed, re.IGNORECASE)]
