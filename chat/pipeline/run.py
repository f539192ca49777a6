"""The answer pipeline for one question (DESIGN.md §3), read top to bottom as the design reads.

understand → classify → retrieve (library, stored abstracts) → judge the evidence → live search if
needed → rank and admit → generate → check every claim against its source → verify identifiers →
rate confidence → format. Each step reads and extends one `AnswerRun` and returns the trace line
it earned; this module only orders the steps and streams progress.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from chat.answer_settings import AnswerSettings, answer_settings
from chat.pipeline.classify import classify_question
from chat.pipeline.events import DoneEvent, PipelineEvent, StatusEvent
from chat.pipeline.format import answer_result
from chat.pipeline.generate import generate
from chat.pipeline.judge import admit, judge_evidence, judge_tool_sources, needs_live_search
from chat.pipeline.live_search import live_search_stored, search_live
from chat.pipeline.result import AnswerResult
from chat.pipeline.retrieve import library_lookup, retraction_note, search_abstracts
from chat.pipeline.state import AnswerRun
from chat.pipeline.support import check_support, checker_for
from chat.pipeline.understand import understand
from chat.pipeline.verify import confidence, verify
from evidence.characters import strip_invisible

MAX_QUESTION_CHARS = 4000


def answer_events(
    *, question: str, history: Sequence[dict[str, str]] = (), settings: AnswerSettings | None = None
) -> Iterator[PipelineEvent]:
    """Answer `question`, yielding progress, scrubbed text and finally a `DoneEvent` with the result.

    Provider failures never escape: they are logged (`llm_provider_error`) and either the
    extractive composer answers instead (`fallback_to_extractive`) or the result carries a clear
    message. Other exceptions (programming errors, a dead database) do propagate.
    """
    # A zero-width character typed or pasted into the question ("Ig\u200bnore") would split a word for every reader.
    run = AnswerRun(
        question=strip_invisible(question).strip(), settings=settings or answer_settings(), history=list(history)
    )

    yield StatusEvent("understand", "Reading the question")
    run.record(understand(run))
    run.record(classify_question(run))
    run.record(library_lookup(run))

    yield StatusEvent("retrieve", "Searching stored PubMed abstracts")
    run.record(search_abstracts(run))
    run.record(judge_evidence(run))
    if needs_live_search(run):
        yield StatusEvent("live_search", "Searching PubMed for more evidence")
        run.record(search_live(run))
        if live_search_stored(run):
            search_abstracts(run)  # the store again, with what the live search added (its line says so)
        run.record(judge_evidence(run))
    if run.retracted_excluded or run.notices_excluded:
        run.record(retraction_note(run))
    run.record(admit(run))

    run.checker = checker_for(run)  # the claim checker the streamed preview and the support step share
    yield from generate(run)
    run.record(check_support(run))
    run.record(verify(run))
    judge_tool_sources(run)  # what the model found with its tools and cited, judged before it is rated
    run.record(confidence(run))
    yield DoneEvent(answer_result(run))


def answer_question(
    *, question: str, history: Sequence[dict[str, str]] = (), settings: AnswerSettings | None = None
) -> AnswerResult:
    """Answer `question` and return the verified result (the non-streaming form of `answer_events`)."""
    for event in answer_events(question=question, history=history, settings=settings):
        if isinstance(event, DoneEvent):
            return event.result
    raise RuntimeError("The answer pipeline ended without a result.")
