"""The verified answer of one question, and the one answer document built from it (DESIGN.md §6).

`answer_document` is the only place the `ask --json` / API / page document is assembled, from a
fresh `AnswerResult` or from a stored assistant message, so the two can never drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from evidence.models import DecisionAid

# Keys of the answer document besides `answer` and `settings_hash`, with their empty values.
DOCUMENT_KEYS: dict[str, Any] = {
    "citations": [],
    "references": [],
    "confidence": "",
    "confidence_reasons": [],
    "abstained": False,
    "trace": [],
    "provider": "",
    "flags": [],
    "decision_aids": [],
    "claims": [],
    "claims_removed": [],
    "abstention": {},
}


def answer_document(*, answer: str, extras: Mapping[str, Any], settings_hash: str) -> dict[str, Any]:
    """Return the answer document (`ask --json`, the API, stored messages) from an answer's stored extras."""
    document: dict[str, Any] = {"answer": answer}
    for key, empty in DOCUMENT_KEYS.items():
        document[key] = extras.get(key, empty)
    document["abstained"] = bool(document["abstained"])
    document["settings_hash"] = settings_hash
    if extras.get("error"):
        document["error"] = extras["error"]
    return document


@dataclass
class AnswerResult:
    """A verified answer with everything needed to show, store, evaluate and reproduce it."""

    question: str
    answer: str
    citations: list[dict[str, Any]]
    references: list[dict[str, Any]]
    confidence: str
    abstained: bool
    trace: list[dict[str, Any]]
    settings_hash: str
    provider: str
    model: str
    intent: str = "general"
    density: float = 0.0
    was_repaired: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, str]] = field(default_factory=list)
    error: dict[str, Any] | None = None
    context: dict[str, Any] = field(default_factory=dict)
    evidence_ids: list[str] = field(default_factory=list)
    decision_aids: list[dict[str, Any]] = field(default_factory=list)
    confidence_reasons: list[str] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    claims_removed: list[dict[str, str]] = field(default_factory=list)
    abstention: dict[str, str] = field(default_factory=dict)

    def ask_json(self) -> dict[str, Any]:
        """Return the `ask --json` / API answer document (DESIGN.md section 6), extended, never renamed."""
        return answer_document(answer=self.answer, extras=self.extras(), settings_hash=self.settings_hash)

    def extras(self) -> dict[str, Any]:
        """Return what the assistant message stores in `extras`."""
        # The fields as they are (JSON values already): a deep copy of the trace cost 4 ms an answer.
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("question", "answer", "context")}
        data["payloads"] = []
        return data


def decision_aid_payload(aid: DecisionAid) -> dict[str, Any]:
    """Return what an answer shows of a curated decision aid: a diagram's boxes, each with the finding it rests on
    (statement, study, direct link, review status), or an image with its alt text."""
    steps = [
        {
            "text": step.text,
            "finding": step.finding.statement,
            "grade": step.finding.grade,
            "review": step.finding.review_words(),
            "study": step.finding.study.study_name,
            "url": step.finding.study.url,
        }
        for step in aid.steps.all()
    ]
    return {
        "title": aid.title,
        "kind": "image" if aid.image else "diagram",
        "steps": steps,
        "image_url": aid.image.url if aid.image else "",
        "alt_text": aid.alt_text,
        "caption": aid.caption,
        "source_url": aid.source_url or (aid.source.url if aid.source else ""),
        "disease_tags": aid.disease_tags,
        "decision_tags": aid.decision_tags,
    }
