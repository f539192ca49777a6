"""What a tray reply is checked and rated with: its citations verified, its badge from the rows it cites,
its suggestions as message entries, and the trials its tool calls fetched as payloads."""

from __future__ import annotations

from typing import Any

import structlog

from evidence.citations.stream import StreamScrubber
from evidence.citations.verify import verify_answer
from evidence.claims.checker import ClaimRecord
from evidence.concepts import Lexicon
from evidence.sources import EvidenceSet
from evidence.vocabulary import Vocabulary
from research.badge import Badge, rate_prose, row_verdicts
from research.context import PageContext
from research.payloads import ParsedPayload, check_payload, tidy_prose
from research.registries import payload_type_get
from research.row_topics import row_topic
from trials import services as trial_services
from trials.clients import CtgovError

logger = structlog.get_logger(__name__)


def payload_entries(payloads: list[ParsedPayload]) -> list[dict[str, Any]]:
    return [
        {"id": f"p{number}", "type": payload.type, "data": payload.data, "state": "pending"}
        for number, payload in enumerate(payloads, start=1)
    ]


def verified_reply(text: str, evidence: EvidenceSet, *, repair: int) -> dict[str, Any]:
    """Verify `text`'s citations; a reply that cites nothing keeps its prose (unverifiable identifiers removed)."""
    verified = verify_answer(text=text, evidence=evidence, intent="research", repair_max_sources=repair, abstention="")
    if not verified.abstained:
        return {
            "text": verified.text,
            "citations": verified.citations,
            "references": verified.references,
            "confidence": verified.confidence,
            "removed": verified.removed,
            "flags": verified.flags,
            "was_repaired": verified.was_repaired,
            "density": verified.density,
        }
    scrubber = StreamScrubber(evidence)
    scrubbed = tidy_prose(scrubber.feed(text) + scrubber.flush())
    return {
        "text": scrubbed,
        "citations": [],
        "references": [],
        "confidence": "",
        "removed": verified.removed,
        "flags": verified.flags,
        "was_repaired": False,
        "density": 0.0,
    }


def prose_badge(
    question: str,
    context: PageContext,
    evidence: EvidenceSet,
    verified: dict[str, Any],
    claims: list[ClaimRecord],
    claims_removed: list[dict[str, str]],
    lexicon: Lexicon,
    vocabulary: Vocabulary,
) -> Badge:
    """Rate a reply in prose: the rows it cites, judged against the question's topic, and its supported statements."""
    topic = row_topic(question, vocabulary=vocabulary, lexicon=lexicon)
    cited = [citation["doc_id"] for citation in verified["citations"]]
    verdicts = row_verdicts(
        topic=topic, evidence=evidence, doc_ids=cited, items={item.source.doc_id: item for item in context.items}
    )
    return rate_prose(
        verdicts=verdicts,
        format_floor=verified["confidence"],
        claims_shown=sum(1 for record in claims if record.supported),
        claims_removed=len(claims_removed),
        density=verified["density"],
    )


def badge_extras(badge: Badge | None) -> dict[str, Any]:
    """Return the badge as reply extras; `confidence_detail` becomes its trace step after verification."""
    if badge is None:
        return {"confidence": "", "confidence_reasons": []}
    rated = badge.confidence
    return {"confidence": rated.level, "confidence_reasons": rated.reasons, "confidence_detail": badge.detail}


def trial_details(tool_calls: list[dict[str, Any]]) -> list[ParsedPayload]:
    """Return a `trial_details` payload for each trial a successful get_trial call fetched."""
    payload_type = payload_type_get("trial_details")
    payloads: list[ParsedPayload] = []
    seen: set[str] = set()
    for call in tool_calls:
        nct_id = str((call.get("arguments") or {}).get("nct_id", "")).upper()
        if call.get("name") != "get_trial" or call.get("is_error") or not nct_id or nct_id in seen:
            continue
        seen.add(nct_id)
        try:
            details = trial_services.get_trial(nct_id=nct_id)  # cached by the tool call a moment ago
            payloads.append(ParsedPayload(payload_type.name, check_payload(payload_type, details.payload)))
        except (CtgovError, ValueError) as exc:
            logger.warning("payload_dropped", payload_type=payload_type.name, reason=str(exc))
    return payloads
