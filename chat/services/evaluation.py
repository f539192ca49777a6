"""Evaluation of the answer pipeline on the golden questions (`manage.py evaluate`).

For each question: which expected identifiers the answer cites (citation coverage), which were
among the retrieved evidence (retrieval recall), the confidence, whether it abstained, and any
identifier shown to the reader that is not verified evidence (must always be 0).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from chat.answer_settings import AnswerSettings
from chat.pipeline import AnswerResult, answer_question
from evidence import identifiers
from evidence.citations.parse import identifiers_in
from evidence.models import Study

GOLDEN_PATH = Path(__file__).resolve().parent.parent / "golden" / "questions.json"
_MARKER = re.compile(r"\[(\d{1,3})\]")


class GoldenError(ValueError):
    """The golden-question file is missing or malformed."""


class GoldenQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    scenario: str = Field(min_length=1)
    question: str = Field(min_length=5)
    expected: list[str] = Field(default_factory=list, description="Identifiers a good answer cites: pmid:/doi:/nct:")
    acceptable: list[str] = Field(
        default_factory=list, description="Other identifiers that address the question (cited without harm)"
    )
    forbidden: list[str] = Field(default_factory=list, description="Identifiers that do not address the question")
    expect_abstain: bool = False
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
    """Read and validate the golden file (questions and the abstracts they need); raise GoldenError."""
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
    return golden


@dataclass
class QuestionScore:
    id: str
    scenario: str
    confidence: str
    abstained: bool
    expect_abstain: bool
    expected: list[str]
    cited: list[str]
    retrieved: list[str]
    fabricated: list[str]
    references: int
    density: float
    was_repaired: bool
    seconds: float
    error: str = ""
    claims_supported: int = 0
    claims_written: int = 0
    citations_supporting: int = 0
    citations_made: int = 0
    acceptable: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    # The identifiers of each reference shown, one list per reference.
    reference_ids: list[list[str]] = field(default_factory=list)

    @property
    def relevant_references(self) -> int:
        """References that address the question: carrying an expected or acceptable identifier."""
        on_topic = set(self.expected) | set(self.acceptable)
        return sum(1 for ids in self.reference_ids if on_topic & set(ids))

    @property
    def forbidden_cited(self) -> list[str]:
        return sorted({value for ids in self.reference_ids for value in ids if value in self.forbidden})

    @property
    def expected_cited(self) -> list[str]:
        return [value for value in self.expected if value in self.cited]

    @property
    def expected_retrieved(self) -> list[str]:
        return [value for value in self.expected if value in self.retrieved]


@dataclass
class EvaluationSummary:
    questions: int
    expected: int
    expected_cited: int
    expected_retrieved: int
    confidence: dict[str, int]
    abstained: int
    abstained_when_expected: int
    expected_abstentions: int
    fabricated: list[str]
    repaired: int
    mean_density: float
    seconds: float
    scores: list[QuestionScore] = field(default_factory=list)
    claims_supported: int = 0
    claims_written: int = 0
    citations_supporting: int = 0
    citations_made: int = 0
    relevant_references: int = 0
    judged_references: int = 0
    forbidden_cited: list[str] = field(default_factory=list)
    answered_when_abstention_expected: int = 0
    green_when_abstention_expected: int = 0

    @property
    def relevance_precision(self) -> float:
        """Share of the references shown (for questions with expected sources) that address the question."""
        return self.relevant_references / self.judged_references if self.judged_references else 0.0

    @property
    def citation_recall(self) -> float:
        """ALCE-style: share of the statements the writer made that their citations support."""
        return self.claims_supported / self.claims_written if self.claims_written else 0.0

    @property
    def citation_precision(self) -> float:
        """ALCE-style: share of the (statement, cited source) pairs in which the source supports the statement."""
        return self.citations_supporting / self.citations_made if self.citations_made else 0.0

    @property
    def citation_coverage(self) -> float:
        return self.expected_cited / self.expected if self.expected else 0.0

    @property
    def retrieval_recall(self) -> float:
        return self.expected_retrieved / self.expected if self.expected else 0.0

    @property
    def abstention_rate(self) -> float:
        return self.abstained / self.questions if self.questions else 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(
            citation_coverage=round(self.citation_coverage, 4),
            retrieval_recall=round(self.retrieval_recall, 4),
            abstention_rate=round(self.abstention_rate, 4),
            fabricated_count=len(self.fabricated),
            citation_recall=round(self.citation_recall, 4),
            citation_precision=round(self.citation_precision, 4),
            relevance_precision=round(self.relevance_precision, 4),
        )
        return data

    def shortfalls(self, targets: Targets) -> list[str]:
        """Return a sentence for every target this run misses (empty when all hold)."""
        missed = []
        if self.fabricated:
            missed.append(f"{len(self.fabricated)} fabricated identifier(s) were shown (target 0)")
        if self.citation_coverage < targets.coverage:
            missed.append(f"citation coverage {self.citation_coverage:.1%} is below {targets.coverage:.0%}")
        if self.relevance_precision < targets.relevance:
            missed.append(f"relevance precision {self.relevance_precision:.1%} is below {targets.relevance:.0%}")
        if self.forbidden_cited:
            missed.append(f"off-topic references were cited: {', '.join(self.forbidden_cited)}")
        if self.expected_abstentions and (
            self.abstained_when_expected / self.expected_abstentions < targets.abstention
        ):
            missed.append(
                f"abstained on {self.abstained_when_expected}/{self.expected_abstentions} questions that must "
                f"abstain (target {targets.abstention:.0%})"
            )
        if self.green_when_abstention_expected:
            missed.append(f"{self.green_when_abstention_expected} question(s) that must abstain were answered GREEN")
        return missed


@dataclass(frozen=True)
class Targets:
    """What `evaluate` requires before it exits 0."""

    coverage: float = 0.85
    relevance: float = 0.80
    abstention: float = 0.9


def _reference_identifiers(reference: dict[str, Any]) -> list[str]:
    found = []
    if reference.get("pmid"):
        found.append(f"pmid:{reference['pmid']}")
    if reference.get("doi"):
        found.append(f"doi:{identifiers.doi_key(reference['doi'])}")
    if reference.get("nct"):
        found.append(f"nct:{reference['nct'].upper()}")
    if reference.get("pmcid"):
        found.append(f"pmcid:{reference['pmcid'].upper()}")
    return found


def library_identifiers() -> set[str]:
    """Return every identifier in the library as kind:key strings (pmid, doi, nct, pmcid)."""
    known: set[str] = set()
    for study in Study.objects.only("pmid", "doi", "nct_number", "pmcid"):
        if study.pmid:
            known.add(f"pmid:{study.pmid}")
        if study.doi:
            known.add(f"doi:{identifiers.doi_key(study.doi)}")
        if study.nct_number:
            known.add(f"nct:{study.nct_number.upper()}")
        if study.pmcid:
            known.add(f"pmcid:{study.pmcid.upper()}")
    return known


def fabricated_identifiers(result: AnswerResult, *, library: set[str]) -> list[str]:
    """Return identifiers the reader sees (answer text, references, markers) that are not verified evidence."""
    allowed = set(result.evidence_ids) | library
    shown: list[str] = []
    for kind, value in identifiers_in(result.answer):
        key = (
            f"doi:{identifiers.doi_key(value)}"
            if kind == "doi"
            else f"{kind}:{value.upper() if kind != 'pmid' else value}"
        )
        shown.append(key)
    for reference in result.references:
        shown.extend(_reference_identifiers(reference))
    fabricated = [value for value in shown if value not in allowed]
    numbers = {int(number) for number in _MARKER.findall(result.answer)}
    fabricated.extend(f"marker:[{number}]" for number in sorted(numbers) if not 1 <= number <= len(result.references))
    return fabricated


def evaluate_question(
    question: GoldenQuestion, *, settings: AnswerSettings, library: set[str]
) -> tuple[QuestionScore, AnswerResult]:
    """Answer one golden question and score it."""
    started = time.monotonic()
    result = answer_question(question=question.question, settings=settings)
    cited = sorted({value for reference in result.references for value in _reference_identifiers(reference)})
    score = QuestionScore(
        id=question.id,
        scenario=question.scenario,
        confidence=result.confidence,
        abstained=result.abstained,
        expect_abstain=question.expect_abstain,
        expected=question.expected,
        cited=cited,
        retrieved=sorted(set(result.evidence_ids)),
        fabricated=fabricated_identifiers(result, library=library),
        references=len(result.references),
        density=result.density,
        was_repaired=result.was_repaired,
        seconds=round(time.monotonic() - started, 3),
        error=(result.error or {}).get("code", ""),
        **claim_support(result),
        acceptable=question.acceptable,
        forbidden=question.forbidden,
        reference_ids=[_reference_identifiers(reference) for reference in result.references],
    )
    return score, result


def claim_support(result: AnswerResult) -> dict[str, int]:
    """Count the written statements the citations support, and the (statement, source) pairs that hold.

    Statements removed as unsupported count as written and unsupported, so the numbers measure what
    the writer produced, before verification took anything away.
    """
    shown = result.claims
    removed = [item for item in result.claims_removed if item.get("kind") == "claim"]
    pairs = [(claim, n) for claim in shown for n in claim["citations"]]
    numbers = {entry["n"]: entry["doc_id"] for entry in result.citations}
    holding = sum(1 for claim, n in pairs if numbers.get(n) in {quote["doc_id"] for quote in claim["support"]})
    return {
        "claims_supported": sum(1 for claim in shown if claim["supported"]),
        "claims_written": len(shown) + len(removed),
        "citations_supporting": holding,
        "citations_made": len(pairs) + len(removed),
    }


def evaluate(
    *,
    questions: Sequence[GoldenQuestion],
    settings: AnswerSettings,
    progress: Callable[[QuestionScore], None] | None = None,
) -> EvaluationSummary:
    """Run every question through the pipeline and return the summary with per-question scores."""
    started = time.monotonic()
    library = library_identifiers()
    scores = []
    for question in questions:
        score, _ = evaluate_question(question, settings=settings, library=library)
        scores.append(score)
        if progress:
            progress(score)
    confidence = Counter(score.confidence for score in scores)
    judged = [score for score in scores if score.expected and not score.abstained]
    densities = [score.density for score in scores if not score.abstained]
    return EvaluationSummary(
        questions=len(scores),
        expected=sum(len(score.expected) for score in scores),
        expected_cited=sum(len(score.expected_cited) for score in scores),
        expected_retrieved=sum(len(score.expected_retrieved) for score in scores),
        confidence={level: confidence.get(level, 0) for level in ("GREEN", "YELLOW", "RED")},
        abstained=sum(score.abstained for score in scores),
        abstained_when_expected=sum(score.abstained for score in scores if score.expect_abstain),
        expected_abstentions=sum(score.expect_abstain for score in scores),
        fabricated=[f"{score.id}: {value}" for score in scores for value in score.fabricated],
        repaired=sum(score.was_repaired for score in scores),
        mean_density=round(sum(densities) / len(densities), 3) if densities else 0.0,
        seconds=round(time.monotonic() - started, 2),
        scores=scores,
        claims_supported=sum(score.claims_supported for score in scores),
        claims_written=sum(score.claims_written for score in scores),
        citations_supporting=sum(score.citations_supporting for score in scores),
        citations_made=sum(score.citations_made for score in scores),
        relevant_references=sum(score.relevant_references for score in judged),
        judged_references=sum(len(score.reference_ids) for score in judged),
        forbidden_cited=[f"{score.id}: {value}" for score in scores for value in score.forbidden_cited],
        answered_when_abstention_expected=sum(
            1 for score in scores if score.expect_abstain and not score.abstained and score.confidence != "RED"
        ),
        green_when_abstention_expected=sum(1 for s in scores if s.expect_abstain and s.confidence == "GREEN"),
    )
