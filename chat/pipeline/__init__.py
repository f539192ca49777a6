"""The answer pipeline: one question in, one verified answer out (DESIGN.md §3)."""

from chat.pipeline.events import DeltaEvent, DoneEvent, PipelineEvent, ResetEvent, StatusEvent
from chat.pipeline.result import AnswerResult, answer_document
from chat.pipeline.run import MAX_QUESTION_CHARS, answer_events, answer_question

__all__ = [
    "MAX_QUESTION_CHARS",
    "AnswerResult",
    "DeltaEvent",
    "DoneEvent",
    "PipelineEvent",
    "ResetEvent",
    "StatusEvent",
    "answer_document",
    "answer_events",
    "answer_question",
]
