"""The tray's reply to one message on a research page, as a stream of events.

read the page (context builder) -> the LLM with the page's tools and payload formats, or the
rules (suggestion builders, extractive answers about the rows) without one -> parse and validate
payloads -> check every statement in prose against the rows it cites (chat's claim checker) ->
verify citations -> rate the badge (`research.badge`) -> store, through chat's `reply_lifecycle` (the
question is stored first, an assistant message always); the same SSE events serve the page
(`chat.streaming.reply_stream`).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from typing import Any

import structlog

from chat.answer_settings import AnswerSettings, answer_settings
from chat.models import Conversation, Message
from chat.pipeline.events import DeltaEvent, PipelineEvent, ResetEvent, StatusEvent
from chat.pipeline.generation import generation_events
from chat.pipeline.support import claim_checker
from chat.prompts import PROVIDER_FAILURE_MESSAGE
from chat.providers import get_provider
from chat.providers.base import Generation, GenerationRequest, ProviderError
from chat.selectors import conversation_history
from chat.services.conversations import (
    UNEXPECTED_FAILURE,
    AnswerSaved,
    Reply,
    ReplyEvent,
    check_question,
    reply_lifecycle,
)
from chat.trace import Trace
from evidence import language
from evidence.citations.stream import StreamScrubber
from evidence.claims.checker import ClaimRecord
from evidence.concepts import Lexicon
from evidence.vocabulary import load_vocabulary
from pubmed.selectors import shorthand_definitions
from research.ai_columns import LLM_REQUIRED_MESSAGE
from research.badge import Badge, rate_computed
from research.context import PROMPT_ITEMS, PageContext
from research.extractive import CANNOT, COMPUTED, answer_from_rows, rows_evidence
from research.holding_pen import pen_stage
from research.payloads import ParsedPayload, check_payload, parse_payloads, payload_preview_cut
from research.prompts import build_tray_prompt, build_tray_turn
from research.registries import Page, page_payload_types, payload_type_get
from research.reply_rating import badge_extras, payload_entries, prose_badge, trial_details, verified_reply
from research.rules.intent import COLUMN, SEARCH, classify_request
from research.rules.pubmed_query import build_pubmed_query
from research.rules.trial_search import build_trial_search
from research.tools import PageToolbox

logger = structlog.get_logger(__name__)

NO_SUGGESTION = (
    "I could not find anything to search for in that request. Name the condition, the intervention "
    "or the study type, e.g. {example}."
)
EXAMPLES = {
    "pubmed_query_suggestion": '"RCTs of apixaban in atrial fibrillation with CKD since 2019"',
    "trial_search_suggestion": '"phase 3 NSCLC trials that are recruiting"',
}
NO_CITATION_NOTICE = "This reply cites none of the loaded rows; treat statements about particular studies with care."


def _suggestion(page: Page, question: str) -> tuple[str, list[ParsedPayload]]:
    payload_type = payload_type_get(page.search_payload)
    vocabulary = load_vocabulary()
    data: Mapping[str, str | list[str]] | None
    if payload_type.name == "pubmed_query_suggestion":
        data = build_pubmed_query(text=question, vocabulary=vocabulary)
        intro = "Here is a PubMed query for your request."
    else:
        data = build_trial_search(text=question, vocabulary=vocabulary)
        intro = "Here is a ClinicalTrials.gov search for your request."
    if data is None:
        return NO_SUGGESTION.format(example=EXAMPLES[payload_type.name]), []
    checked = check_payload(payload_type, data)
    text = f"{intro} {checked['explanation']} Accept it to run the search, or dismiss it to keep the current results."
    return text, [ParsedPayload(payload_type.name, checked)]


def _rules_reply(
    *, page: Page, context: PageContext, question: str, settings: AnswerSettings, trace: Trace, notice: str = ""
) -> Generator[PipelineEvent, None, Reply]:
    """Reply without a language model: a rule-built suggestion, or an extractive answer about the rows."""
    kind = classify_request(text=question, has_items=bool(context.items))
    yield StatusEvent("generate", "Building a suggestion" if kind == SEARCH else "Reading the loaded rows")
    payloads: list[ParsedPayload] = []
    vocabulary, (lexicon, _) = load_vocabulary(), Lexicon.load().read_for(question, define=shorthand_definitions)
    evidence = rows_evidence(context, question=question, vocabulary=vocabulary, lexicon=lexicon)
    badge: Badge | None = None
    claims: list[ClaimRecord] = []
    claims_removed: list[dict[str, str]] = []
    names_rows = False
    if kind == SEARCH:
        prose, payloads = _suggestion(page, question)
        verified = verified_reply(prose, evidence, repair=0)
        detail = f"Rule-based {page.search_payload}" if payloads else "No searchable terms found"
    elif kind == COLUMN:
        verified = verified_reply(LLM_REQUIRED_MESSAGE, evidence, repair=0)
        detail = "AI columns need a language model"
    else:
        answer = answer_from_rows(
            question=question, context=context, settings=settings, vocabulary=vocabulary, lexicon=lexicon
        )
        if answer.basis is not None:
            verified = verified_reply(answer.text, evidence, repair=0)
            badge = rate_computed(answer.basis, format_floor=verified["confidence"])
            names_rows = answer.kind == COMPUTED and bool(verified["references"])
            detail = "The loaded rows cannot answer this" if answer.kind == CANNOT else "Computed from the loaded rows"
        else:
            checked = claim_checker(evidence, settings, ask_model=False).check(answer.text)
            claims, claims_removed = checked.records, checked.claims_removed
            verified = verified_reply(checked.text, evidence, repair=settings.repair_max_sources if answer.cites else 0)
            verified["removed"] = checked.identifiers_removed + verified["removed"]
            badge = prose_badge(question, context, evidence, verified, claims, claims_removed, lexicon, vocabulary)
            detail = "Extractive answer from the loaded rows"
    trace.add("generate", "Wrote the reply", f"{detail} (no language model)", intent=kind, provider="extractive")
    yield DeltaEvent(verified["text"])  # composed at once: one delta, one preview rendering
    return Reply(
        content=verified["text"],
        extras={
            **verified,
            **badge_extras(badge),
            "claims": [record.to_dict() for record in claims],
            "claims_removed": claims_removed,
            "names_rows": names_rows,
            "provider": "extractive",
            "model": "",
            "intent": kind,
            "payloads": payload_entries(payloads),
            "dropped_payloads": [],
            "tool_calls": [],
            **({"error": {"code": "llm_failed", "message": notice, "notice": notice}} if notice else {}),
        },
        context={"intent": kind},
    )


def _failed_reply(exc: ProviderError, settings: AnswerSettings) -> Reply:
    """The reply when the model failed and `fallback_to_extractive` is off: chat's message, nothing cited."""
    message = PROVIDER_FAILURE_MESSAGE.format(reason=exc.message.rstrip("."))
    return Reply(
        content=message,
        extras={
            "text": message,
            "citations": [],
            "references": [],
            "removed": [],
            "flags": [],
            "was_repaired": False,
            "density": 0.0,
            **badge_extras(None),
            "claims": [],
            "claims_removed": [],
            "names_rows": False,
            "provider": settings.provider,
            "model": settings.model,
            "intent": "",
            "payloads": [],
            "dropped_payloads": [],
            "tool_calls": [],
            "error": {**exc.as_dict(), "notice": message},
        },
        context={"intent": ""},
    )


def _llm_reply(
    *,
    page: Page,
    context: PageContext,
    question: str,
    history: list[dict[str, str]],
    settings: AnswerSettings,
    trace: Trace,
) -> Generator[PipelineEvent, None, Reply]:
    """Reply with the configured LLM: page state in the prompt, page tools, payloads parsed from its text."""
    types = page_payload_types(page)
    pen_key = ""
    if len(context.items) > PROMPT_ITEMS:
        pen_key = pen_stage(entries=context.staged_lines(start=PROMPT_ITEMS), offset=PROMPT_ITEMS)
    toolbox = PageToolbox(page=page, pen_key=pen_key)
    vocabulary, (lexicon, _) = load_vocabulary(), Lexicon.load().read_for(question, define=shorthand_definitions)
    evidence = rows_evidence(context, question=question, vocabulary=vocabulary, lexicon=lexicon)
    checker = claim_checker(evidence, settings)
    request = GenerationRequest(
        question=question,
        system_prompt=build_tray_prompt(
            page=page, payload_types=types, page_state=context.prompt_text(limit=PROMPT_ITEMS)
        ),
        evidence=evidence,
        settings=settings,
        history=history,
        toolbox=toolbox,
        user_turn=build_tray_turn(page=page, question=question),
    )
    provider = get_provider(settings)
    yield StatusEvent("generate", "Thinking about the page")
    generation: Generation | None = None
    for event in generation_events(
        provider,
        request,
        StreamScrubber(evidence, screen=checker.screen),
        shown_upto=lambda raw: payload_preview_cut(raw, types=types),
    ):
        if isinstance(event, Generation):
            generation = event
        else:
            yield event
    assert generation is not None  # generation_events raises ProviderError otherwise
    parsed = parse_payloads(generation.text, types=types)
    payloads = parsed.payloads
    if "trial_details" in page.payload_types:
        payloads = payloads + trial_details(generation.tool_calls)
    checked = checker.check(parsed.prose)
    claims, claims_removed = checked.records, checked.claims_removed
    verified = verified_reply(checked.text, evidence, repair=0)
    verified["removed"] = checked.identifiers_removed + verified["removed"]
    badge = None
    if verified["references"] or not payloads:
        badge = prose_badge(question, context, evidence, verified, claims, claims_removed, lexicon, vocabulary)
    trace.add(
        "generate",
        "Wrote the reply",
        f"{provider.name} {settings.model}; {generation.rounds} round(s)"
        + (f"; tools: {', '.join(call['name'] for call in generation.tool_calls)}" if generation.tool_calls else "")
        + f"; {len(payloads)} payload(s)"
        + (f", {len(parsed.dropped)} dropped" if parsed.dropped else ""),
        provider=provider.name,
        model=settings.model,
        usage=generation.usage,
        tools_offered=toolbox.names,
    )
    notice = ""
    if not verified["references"] and verified["removed"]:
        notice = NO_CITATION_NOTICE
    return Reply(
        content=verified["text"],
        extras={
            **verified,
            **badge_extras(badge),
            "claims": [record.to_dict() for record in claims],
            "claims_removed": claims_removed,
            "names_rows": False,
            "provider": provider.name,
            "model": settings.model,
            "intent": "model",
            "payloads": payload_entries(payloads),
            "dropped_payloads": [{"type": d.type, "reason": d.reason, "excerpt": d.excerpt} for d in parsed.dropped],
            "tool_calls": generation.tool_calls,
            **({"error": {"code": "unverified", "message": notice, "notice": notice}} if notice else {}),
        },
        context={"intent": "model", "holding_pen": pen_key, "tools": toolbox.names},
    )


def _reply_core(
    *,
    conversation: Conversation,
    page: Page,
    state: str,
    question: str,
    user: Any,
    settings: AnswerSettings,
    question_message: Message,
) -> Iterator[PipelineEvent | Reply]:
    trace = Trace()
    language.refresh()  # the curated words, read once per reply
    yield StatusEvent("context", f"Reading the {page.title} page")
    context = page.build_context(state=state, user=user)
    trace.add(
        "context",
        "Read the page",
        f"{len(context.items)} {page.item_label_plural} loaded"
        + (f" of {context.total}" if context.total is not None else "")
        + f"; {len(context.columns)} AI column(s)"
        + (f"; page error: {context.error}" if context.error else ""),
        loaded=len(context.items),
        total=context.total,
    )
    if settings.provider == "extractive":
        outcome = yield from _rules_reply(page=page, context=context, question=question, settings=settings, trace=trace)
    else:
        history = conversation_history(conversation=conversation, before=question_message, turns=settings.history_turns)
        try:
            outcome = yield from _llm_reply(
                page=page, context=context, question=question, history=history, settings=settings, trace=trace
            )
        except ProviderError as exc:
            logger.warning("llm_provider_error", provider=settings.provider, code=exc.code, error=exc.message)
            trace.add("generate", "The language model failed", f"{exc.code}: {exc.message}", error=exc.as_dict())
            yield ResetEvent(exc.code)
            if settings.fallback_to_extractive:  # chat's rule: the evidence answers when the model cannot
                reason = exc.message.rstrip(".")
                notice = f"The language model could not answer ({reason}); this reply was built by rules."
                outcome = yield from _rules_reply(
                    page=page, context=context, question=question, settings=settings, trace=trace, notice=notice
                )
            else:
                outcome = _failed_reply(exc, settings)
                yield DeltaEvent(outcome.content)
    claims_removed = outcome.extras.get("claims_removed", [])
    trace.add(
        "verify",
        "Verified every citation",
        f"{len(outcome.extras.get('references', []))} loaded row(s) cited and verified; "
        f"{len(outcome.extras.get('removed', []))} unverifiable identifier(s) removed"
        + (
            f"; {len(claims_removed)} statement(s) removed as unsupported by the rows they cite"
            if claims_removed
            else ""
        ),
    )
    detail = outcome.extras.pop("confidence_detail", "")
    if detail:
        trace.add(
            "confidence",
            "Rated confidence",
            detail,
            confidence=outcome.extras["confidence"],
            reasons=outcome.extras["confidence_reasons"],
        )
    outcome.extras.update(page=page.name, trace=trace.steps, settings_hash=settings.short_hash(), abstained=False)
    outcome.context.update(
        page=page.name,
        state=context.state,
        question=question,
        loaded=len(context.items),
        total=context.total,
        in_prompt=min(len(context.items), PROMPT_ITEMS),
    )
    yield outcome


def tray_reply_events(
    *, conversation: Conversation, page: Page, state: str, text: Any, user: Any, settings: AnswerSettings | None = None
) -> Iterator[ReplyEvent]:
    """Store the question, reply to it on `page`, store the reply; yield progress and both stored messages.

    Raises ValidationError (before storing anything) for an empty or oversized question.
    """
    question = check_question(text)
    settings = settings or answer_settings()

    def produce(question_message: Message) -> Iterator[PipelineEvent | Reply]:
        return _reply_core(
            conversation=conversation,
            page=page,
            state=state,
            question=question,
            user=user,
            settings=settings,
            question_message=question_message,
        )

    return reply_lifecycle(
        conversation=conversation,
        question=question,
        question_context={"page": page.name, "state": state},
        produce=produce,
        failure=Reply(
            content=UNEXPECTED_FAILURE,
            context={"page": page.name, "state": state, "question": question},
            extras={
                "page": page.name,
                "payloads": [],
                "references": [],
                "error": {"code": "internal_error", "message": UNEXPECTED_FAILURE, "notice": UNEXPECTED_FAILURE},
            },
        ),
        settings_hash=settings.short_hash(),
    )


def tray_reply(
    *, conversation: Conversation, page: Page, state: str, text: Any, user: Any, settings: AnswerSettings | None = None
) -> Message:
    """Store the question and the tray's reply; return the stored assistant message."""
    for event in tray_reply_events(
        conversation=conversation, page=page, state=state, text=text, user=user, settings=settings
    ):
        if isinstance(event, AnswerSaved):
            return event.message
    raise RuntimeError("The tray reply ended without storing a message.")
