"""Evaluation of the answer pipeline on the golden questions (`manage.py evaluate`).

For each question: which expected identifiers the answer cites (citation coverage), which were
among the retrieved evidence (retrieval recall), the confidence, whether it abstained, and any
identifier shown to the reader that is not verified evidence (must always be 0).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from chat.answer_settings import AnswerSettings
from chat.pipeline import AnswerResult, answer_question
from chat.services.golden import GoldenQuestion, conversation, first_sentence, listed_as_missing, unmet_requirements
from evidence import identifiers
from evidence.citations.parse import identifiers_in
from evidence.models import Study

_MARKER = re.compile(r"\[(\d{1,3})\]")


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
    kind: str = ""
    split: str = ""
    first_sentence: str = ""
    first_sentence_unmet: list[str] | None = None  # None: the question sets no requirement
    listed_missing: list[str] = field(default_factory=list)  # words the answer must never list as not covered

    @property
    def false_abstention(self) -> bool:
        """The library or the store holds what answers it, yet the answer abstained."""
        return bool(self.expected) and not self.expect_abstain and self.abstained

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
    false_abstentions: list[str] = field(default_factory=list)
    first_sentence_asked: int = 0
    first_sentence_answered: int = 0
    gap_errors: list[str] = field(default_factory=list)

    @property
    def first_sentence_rate(self) -> float:
        """Share of the questions with a first-sentence requirement whose first sentence meets it."""
        return self.first_sentence_answered / self.first_sentence_asked if self.first_sentence_asked else 1.0

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
            first_sentence_rate=round(self.first_sentence_rate, 4),
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
        if len(self.false_abstentions) > targets.false_abstentions:
            missed.append(
                f"{len(self.false_abstentions)} false abstention(s) ({', '.join(self.false_abstentions)}; "
                f"target at most {targets.false_abstentions})"
            )
        if self.first_sentence_rate < targets.first_sentence:
            missed.append(
                f"the first sentence answered {self.first_sentence_answered}/{self.first_sentence_asked} "
                f"({self.first_sentence_rate:.1%}), below {targets.first_sentence:.0%}"
            )
        if self.gap_errors:
            missed.append(f"question words listed as not covered: {'; '.join(self.gap_errors)}")
        return missed


@dataclass(frozen=True)
class Targets:
    """What `evaluate` requires before it exits 0."""

    coverage: float = 0.85
    relevance: float = 0.80
    abstention: float = 0.9
    first_sentence: float = 0.9
    false_abstentions: int = 0


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
    question: GoldenQuestion, *, settings: AnswerSettings, library: set[str], earlier: Sequence[str] = ()
) -> tuple[QuestionScore, AnswerResult]:
    """Answer one golden question (after the `earlier` questions of its conversation) and score it."""
    started = time.monotonic()
    history = [{"role": "user", "content": text} for text in earlier]
    result = answer_question(question=question.question, settings=settings, history=history)
    lead = "" if result.abstained else first_sentence(result.answer)
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
        kind=question.kind,
        split=question.split,
        first_sentence=lead,
        first_sentence_unmet=unmet_requirements(lead, question.first_sentence) if question.first_sentence else None,
        listed_missing=listed_as_missing(result.answer, question.never_missing),
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
    conversations: Sequence[GoldenQuestion] = (),
) -> EvaluationSummary:
    """Run every question through the pipeline and return the summary with per-question scores.

    A follow-up is asked after the earlier questions of its conversation, looked up in `conversations`
    (the whole set, when `questions` is a part of it) or in `questions`.
    """
    started = time.monotonic()
    library = library_identifiers()
    scores = []
    for question in questions:
        earlier = conversation(question, list(conversations or questions))
        score, _ = evaluate_question(question, settings=settings, library=library, earlier=earlier)
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
        false_abstentions=[score.id for score in scores if score.false_abstention],
        first_sentence_asked=sum(1 for s in scores if s.first_sentence_unmet is not None),
        first_sentence_answered=sum(1 for s in scores if s.first_sentence_unmet == []),
        gap_errors=[f"{s.id}: {', '.join(s.listed_missing)}" for s in scores if s.listed_missing],
    )
