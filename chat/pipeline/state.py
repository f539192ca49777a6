"""The one object an answer run carries through the pipeline steps, and the trace derived from it.

Each step reads what earlier steps put on the `AnswerRun`, adds its own part, and returns a
`TraceStep` that describes what it decided, computed from the run rather than assembled beside it
(the shape of PaperQA2's session object).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from chat.answer_settings import AnswerSettings
from chat.pipeline.trace_words import step_sentence
from chat.providers.base import Generation, ProviderError
from chat.trace import Trace
from evidence.citations.verify import VerifiedAnswer
from evidence.claims.checker import ClaimRecord, SupportChecker
from evidence.classification import Classification
from evidence.concepts import Concept, Lexicon
from evidence.decomposition import SubQuery
from evidence.followup import FollowUp
from evidence.lexicon import Defined
from evidence.models import Study
from evidence.patient import PatientDetails
from evidence.pico import Pico
from evidence.question_parts import QuestionParts, unanswered_parts
from evidence.ranking import RankingResult
from evidence.sources import EvidenceSet, EvidenceSource
from evidence.sufficiency import Sufficiency
from evidence.vocabulary import Vocabulary


@dataclass(frozen=True)
class Judgement:
    """Whether one candidate addresses the question, and why."""

    doc_id: str
    title: str
    origin: str
    semantic: float
    coverage: float
    score: float
    addresses: bool
    direct: bool
    synthesis: bool
    missing: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    reason: str = ""  # why, with the score and threshold behind it (the trace's developer line)
    why: str = ""  # the same in words only, for the reader

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class TraceStep:
    """One line of "How this answer was built": what a step decided, in words and as data."""

    step: str
    label: str
    detail: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class AnswerRun:
    """Everything known about one question, from the words typed to the verified answer."""

    question: str
    settings: AnswerSettings
    history: list[dict[str, str]] = field(default_factory=list)
    # understand
    follow_up: FollowUp | None = None
    vocabulary: Vocabulary | None = None
    pico: Pico | None = None
    sub_queries: list[SubQuery] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    concepts: list[Concept] = field(default_factory=list)
    parts: QuestionParts = field(default_factory=QuestionParts)  # what an answer can miss, read once (understand)
    lexicon: Lexicon = field(default_factory=Lexicon)
    defined: list[Defined] = field(default_factory=list)  # shorthand read as the stored abstracts define it
    search_text: str = ""
    asks: list[str] = field(default_factory=list)  # what the question asks for: a drug, a dose ... (evidence.asks)
    focus: frozenset[str] = frozenset()  # the topic stems a follow-up adds to the question before it
    patient: PatientDetails = field(default_factory=PatientDetails)  # kidney function, stage ... (evidence.patient)
    weights: dict[str, float] = field(default_factory=dict)
    context: str | None = None
    library: list[Study] = field(default_factory=list)
    named: list[Study] = field(default_factory=list)
    # classify
    classification: Classification | None = None
    anchors: list[Study] = field(default_factory=list)
    intent: str = "general"
    # retrieve
    tags: list[str] = field(default_factory=list)
    matched: list[Study] = field(default_factory=list)
    tag_scores: dict[str, float] = field(default_factory=dict)
    wording: dict[str, float] = field(default_factory=dict)
    library_sources: list[tuple[EvidenceSource, Study]] = field(default_factory=list)
    retrieved: list[EvidenceSource] = field(default_factory=list)
    best_chunks: dict[str, str] = field(default_factory=dict)
    retrieval_error: str = ""
    live: dict[str, Any] | None = None
    # PMID → title of every retracted paper kept out of this answer (library rows and abstracts)
    retracted_excluded: dict[str, str] = field(default_factory=dict)
    # PMID → title of retraction notices found by the search: they point at withdrawn work, they are not evidence
    notices_excluded: dict[str, str] = field(default_factory=dict)
    # judge
    judgements: dict[str, Judgement] = field(default_factory=dict)
    ranking: RankingResult | None = None
    sufficiency: Sufficiency | None = None
    kept: list[str] = field(default_factory=list)
    evidence: EvidenceSet | None = None
    # generate
    generation: Generation | None = None
    provider: str = "extractive"
    composed_by: str = "extractive"
    error: ProviderError | None = None
    # support
    checker: SupportChecker | None = None
    claims: list[ClaimRecord] = field(default_factory=list)
    claims_removed: list[dict[str, str]] = field(default_factory=list)
    identifiers_removed: list[dict[str, str]] = field(default_factory=list)
    # verify
    verified: VerifiedAnswer | None = None
    confidence: str = ""
    abstention: dict[str, str] = field(default_factory=dict)
    confidence_reasons: list[str] = field(default_factory=list)
    tracer: Trace = field(default_factory=Trace, repr=False)

    @property
    def trace(self) -> list[dict[str, Any]]:
        """The steps recorded so far, as "How this answer was built" shows them."""
        return self.tracer.steps

    @property
    def started(self) -> float:
        return self.tracer.started

    def record(self, step: TraceStep) -> None:
        """Add `step` to the trace (the one trace builder, `chat.trace.Trace`) with its reader's sentence."""
        again = any(recorded["step"] == step.step for recorded in self.trace)
        self.tracer.record(
            step.step,
            step.label,
            step.detail,
            step.data,
            summary=step_sentence(step.step, step.label, step.data, again=again),
        )

    def require_pico(self) -> Pico:
        """Return the PICO; the understand step must have run."""
        if self.pico is None or self.vocabulary is None:
            raise RuntimeError("The understand step has not run for this question.")
        return self.pico

    def unaddressed(self, admitted: set[str]) -> list[str]:
        """Return what the question asks about (the drug it names) that none of the `admitted` sources speaks to:
        a library study by its curated findings (its description only helps find it), an abstract by its text."""
        library = [source for source, _ in self.library_sources]
        sources = [s for s in library + self.retrieved if s.doc_id in admitted]
        texts = [" ".join(f.shown for f in s.findings) or s.text for s in sources]
        return unanswered_parts(self.parts, texts, sources=library) if texts else []

    def approved(self) -> list[EvidenceSource]:
        """Return the admitted sources, best first."""
        return [source for source in (self.evidence.sources if self.evidence else []) if source.approved]


def names(items: Sequence[Any], attribute: str, limit: int = 6) -> str:
    """Return up to `limit` items' `attribute` joined for a trace line, with "and N more"."""
    shown = [str(getattr(item, attribute)) for item in items[:limit]]
    more = len(items) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def plural(count: int, one: str, many: str) -> str:
    """Return "1 study" / "3 studies"."""
    return f"{count} {one if count == 1 else many}"
