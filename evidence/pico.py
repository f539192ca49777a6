"""PICO extraction: turn a clinical question into structured PICO with disease and decision tags.

With a language model configured, the model proposes the PICO as JSON validated against
`PICO_JSON_SCHEMA`; its tags are kept only if they exist in the vocabulary. Without a model, or on
any failure, the vocabulary-driven extractor below answers. Either way every tag in the result is
a vocabulary code, and the primary tags are members of the tag lists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import jsonschema
import structlog

from evidence import language
from evidence.sentences import asking_spans
from evidence.vocabulary import DECISION, DISEASE, TagMatch, Vocabulary, is_negated

logger = structlog.get_logger(__name__)

# Given a prompt and a JSON schema, return the model's parsed JSON object (or raise).
LlmJson = Callable[[str, dict[str, Any]], dict[str, Any]]

_DIAGNOSED_BEFORE = re.compile(r"\b(?:newly|recently|previously|already|just|first)\s+$", re.IGNORECASE)
_DIAGNOSED_AFTER = re.compile(r"^\s+(?:with|as)\b", re.IGNORECASE)


_PATIENT_RE = re.compile(
    r"\b(?:an?\s+)?(\d{1,3})[-\s]?(?:year|yr)[-\s]?old\s+(man|woman|male|female|patient|person|boy|girl)"
    r"(?:\s+with\s+([^.;?]+?))?(?=[,.;?]|\s+(?:who|on|after|should|is|has|taking)\b|$)",
    re.IGNORECASE,
)
_POPULATION_RE = re.compile(
    r"\b(?:patients?|adults?|people|women|men)\s+with\s+([^.;?]+?)(?=[,.;?]|\s+(?:who|should|is|are)\b|$)", re.I
)
_COMPARISON_RE = re.compile(
    r"\b(?:versus|vs\.?|compared (?:with|to)|rather than|instead of|over)\s+([^,.;?]+)", re.IGNORECASE
)

PICO_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["patient", "intervention", "comparison", "outcome", "condition", "disease_tags", "decision_tags"],
    "properties": {
        "patient": {"type": "string", "maxLength": 300},
        "intervention": {"type": "string", "maxLength": 300},
        "comparison": {"type": "string", "maxLength": 300},
        "outcome": {"type": "string", "maxLength": 300},
        "condition": {"type": "string", "maxLength": 300},
        "disease_tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "decision_tags": {"type": "array", "items": {"type": "string"}, "maxItems": 6},
        "primary_disease_tag": {"type": ["string", "null"]},
        "primary_decision_tag": {"type": ["string", "null"]},
    },
}


@dataclass(frozen=True)
class Pico:
    patient: str
    intervention: str
    comparison: str
    outcome: str
    condition: str
    disease_tags: list[str]
    decision_tags: list[str]
    primary_disease_tag: str | None
    secondary_disease_tags: list[str]
    primary_decision_tag: str | None
    secondary_decision_tags: list[str]
    source: str = "vocabulary"
    notes: list[str] = field(default_factory=list)
    # The disease tags that only narrow a disease (stage, assay type: `Tag.is_modifier`).
    modifier_tags: list[str] = field(default_factory=list)

    def about(self, tag: str | None) -> Pico:
        """Return this PICO with `tag`, one of its disease tags, as the primary condition."""
        if tag is None or tag == self.primary_disease_tag or tag not in self.disease_tags:
            return self
        secondary = [t for t in self.disease_tags if t != tag]
        return replace(self, primary_disease_tag=tag, secondary_disease_tags=secondary)

    @property
    def condition_tags(self) -> list[str]:
        """The disease tags that name a condition: sharing only a modifier (stage II) is no overlap."""
        return [tag for tag in self.disease_tags if tag not in self.modifier_tags]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_primary_disease(tags: list[str], vocabulary: Vocabulary) -> str | None:
    """Return the first-mentioned disease tag that is not a modifier (stage, assay), else the first tag."""
    return next(iter(vocabulary.conditions(tags)), tags[0] if tags else None)


def choose_primary_decision(tags: list[str], vocabulary: Vocabulary) -> str | None:
    """Return the first-mentioned specific decision; a generic one (therapy, drug choice) only if alone."""
    return next((tag for tag in tags if not vocabulary.is_generic(tag)), tags[0] if tags else None)


def _assemble(
    *,
    vocabulary: Vocabulary,
    disease_tags: list[str],
    decision_tags: list[str],
    primary_disease: str | None,
    primary_decision: str | None,
    patient: str,
    intervention: str,
    comparison: str,
    outcome: str,
    condition: str,
    source: str,
    notes: list[str] | None = None,
) -> Pico:
    if primary_disease not in disease_tags:
        primary_disease = choose_primary_disease(disease_tags, vocabulary)
    if primary_decision not in decision_tags:
        primary_decision = choose_primary_decision(decision_tags, vocabulary)
    # Two tags may carry one label ("cap" and "community_acquired_pneumonia"): it is written once.
    labels = dict.fromkeys(vocabulary.label(tag) for tag in vocabulary.conditions(disease_tags))
    condition = condition or " with ".join(labels)
    return Pico(
        patient=patient.strip(),
        intervention=intervention.strip(),
        comparison=comparison.strip(),
        outcome=outcome.strip(),
        condition=condition.strip(),
        disease_tags=disease_tags,
        decision_tags=decision_tags,
        primary_disease_tag=primary_disease,
        secondary_disease_tags=[t for t in disease_tags if t != primary_disease],
        primary_decision_tag=primary_decision,
        secondary_decision_tags=[t for t in decision_tags if t != primary_decision],
        source=source,
        notes=notes or [],
        modifier_tags=[tag for tag in disease_tags if vocabulary.is_modifier(tag)],
    )


def describes_patients(question: str, match: TagMatch, vocabulary: Vocabulary) -> bool:
    """Whether a tag match is one of its patient wordings (`Tag.patient_wordings`) saying who the patients are.

    "newly diagnosed T2DM", "diagnosed with AF" name the population; "how is PE diagnosed?" asks about diagnosis.
    """
    term = vocabulary.terms.get(match.code)
    return (
        term is not None
        and match.text.lower() in term.patient_wordings
        and bool(_DIAGNOSED_BEFORE.search(question[: match.start]) or _DIAGNOSED_AFTER.match(question[match.end :]))
    )


# What the patient already takes: "on ARNI, BB, MRA", "already taking metformin and a statin". The list runs to the
# end of its clause: a dash, a semicolon or a colon, a question mark or full stop, or a word that starts the question.
_REGIMEN = re.compile(
    r"(?<![\w-])(?:(?:already|currently|now)\s+)?(?:on|taking|receiving|maintained\s+on)\s+"
    r"(?P<items>[^\s.;:?!()\u2013\u2014-](?:(?!\s[-\u2013\u2014]\s|[.;:?!()]\s|[;:?!()]).)*?)"
    r"(?=\s+[-\u2013\u2014]\s|[;:?!()]|\.(?:\s|$)|,?\s+(?:still|but|yet|despite|now|with|for|who|what|which|should|"
    r"add|adding|start|starting|next|and\s+still)\b|$)",
    re.IGNORECASE,
)
# "Evidence on X", "data on X": there "on" means "about", not a treatment the patient takes.
_ABOUT_BEFORE = re.compile(
    r"\b(?:evidence|data|studies|study|trials?|literature|research|guidance|guidelines?|recommendations?|effects?|"
    r"impact|information|advice|views?|consensus|review|update)\s*$",
    re.IGNORECASE,
)
# A question that asks what to add to, or do after, the patient's regimen.
_ADDS = re.compile(
    r"\b(?:add|adding|addition|start|starting|initiate|initiating|escalate|escalating|escalation|intensify|"
    r"intensifying|next|step\s+up|what\s+else|further)\b",
    re.IGNORECASE,
)


# A value measured in the patient: a short name written as an abbreviation, then a number with no dose or time unit
# ("K 6.1", "Hb 10.4", "EF 30%", "INR 3.5", "ECOG 1"); not a status ("HER2 3+") or a year ("TAVR 2019").
_MEASUREMENT = re.compile(
    r"\b[A-Z][A-Za-z0-9]{0,4}(?:\s*[:=]\s*|\s+of\s+|\s+)(?:[<>\u2264\u2265]=?\s*)?(?!(?:19|20)\d\d\b)\d+(?:\.\d+)?\s*%?"
    r"(?![\w.+-])(?!\s*(?:mg|mcg|\u00b5g|g|units?|IU|mL|L|x|times|min|minutes?|h|hrs?|hours?|d|days?|wks?|weeks?|"
    r"mos?|months?|y|yrs?|years?)\b)"
)


def measurement_spans(question: str) -> list[tuple[int, int]]:
    """Return where the question gives a value measured in the patient: a detail of the patient, never a topic."""
    return [match.span() for match in _MEASUREMENT.finditer(question)]


def regimen_spans(question: str, drugs_asked: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Return the spans of the treatments the patient is already on, when the question asks what to add or do next,
    or asks about another drug (`drugs_asked`: where it names a drug to choose, outside the regimen).

    In "HFrEF on ARNI, BB, MRA - add SGLT2i?" and "LVEF 30% -> 50% on GDMT - do the SGLT2i trials cover him?" the
    regimen is the patient's background: an answer about the SGLT2 inhibitor need not address it. A question about
    the drug the patient is on ("on apixaban - hold before colonoscopy?", "on tamoxifen - endometrial surveillance?")
    asks about that drug: no span is returned there. "Data on X" is about X, not a treatment taken.
    """
    items = [
        match.span("items")
        for match in _REGIMEN.finditer(question)
        if not _ABOUT_BEFORE.search(question[: match.start()])
    ]
    elsewhere = any(not any(start <= at < end for start, end in items) for at, _ in drugs_asked)
    return items if items and (elsewhere or _ADDS.search(question)) else []


def extract_pico_rules(
    question: str,
    *,
    vocabulary: Vocabulary,
    spelled_out: Sequence[str] = (),
    spelled_phrases: Sequence[tuple[str, int, int]] = (),
) -> Pico:
    """Return the PICO found by matching the vocabulary's synonyms in the question.

    `spelled_out` are what the question's shorthand stands for ("antibiotics" for "abx", from the
    curated abbreviations): the tags they name join the question's own, after them; the rest of the
    PICO (outcome, patient, comparison) is read from the question's own words only. `spelled_phrases`
    (`Lexicon.spelled_phrases`) are the shorthand spelled out among its neighbouring words: a tag found
    across the spelled-out part ("bleeding duodenal ulcer" for "bleeding DU") joins too.
    """
    matches = [
        m
        for m in vocabulary.matches(question)
        if not describes_patients(question, m, vocabulary) and not is_negated(question, m)
    ]
    # The outcome cues of the word table, longest first ("major bleeding" before "bleeding").
    outcome_re = language.current().pattern(language.WordClass.OUTCOME)
    outcome_spans = [m.span() for m in outcome_re.finditer(question)]
    first_decision = next((m.start for m in matches if m.kind == DECISION), len(question))

    def is_outcome(match: TagMatch) -> bool:
        # "... apixaban ... for stroke and major bleeding": diseases named as outcomes after the
        # intervention are outcomes, not the patient's condition.
        return match.start > first_decision and any(s <= match.start and match.end <= e for s, e in outcome_spans)

    outcome_codes = {m.code for m in matches if m.kind == DISEASE and is_outcome(m)}
    condition_codes = {m.code for m in matches if m.kind == DISEASE and not is_outcome(m)}
    # Outcome-only diseases are dropped only when another disease names the condition.
    disease_tags = [
        code
        for code in dict.fromkeys(m.code for m in matches if m.kind == DISEASE)
        if code in condition_codes or code not in outcome_codes or not condition_codes
    ]
    decision_tags = list(dict.fromkeys(m.code for m in matches if m.kind == DECISION))
    spelled = [(wording, 0, len(wording)) for wording in spelled_out] + list(spelled_phrases)
    for wording, start, end in spelled:
        for match in vocabulary.matches(wording):
            if not (match.start < end and start < match.end):
                continue  # a tag of the neighbouring words alone: the question's own reading stands
            tags = disease_tags if match.kind == DISEASE else decision_tags if match.kind == DECISION else None
            if tags is not None and match.code not in tags:
                tags.append(match.code)
    # What the question asks decides before what its story names ("she stopped apixaban ...; her GP asks whether and
    # when to restart it" is about restarting, not stopping).
    spans = asking_spans(question)
    asked = [m.code for m in matches if m.kind == DECISION and any(s <= m.start < e for s, e in spans)]
    primary_decision = next((t for t in asked if not vocabulary.is_generic(t)), None) or choose_primary_decision(
        decision_tags, vocabulary
    )

    patient = ""
    if found := _PATIENT_RE.search(question):
        age, sex, condition_text = found.groups()
        patient = f"{age}-year-old {sex.lower()}" + (f" with {condition_text.strip()}" if condition_text else "")
    elif found := _POPULATION_RE.search(question):
        patient = f"patients with {found.group(1).strip()}"
    intervention = next(
        (m.text for m in matches if m.kind == DECISION and m.code == primary_decision),
        vocabulary.label(primary_decision) if primary_decision else "",
    )
    comparison = found.group(1).strip() if (found := _COMPARISON_RE.search(question)) else ""
    outcomes = list(dict.fromkeys(m.group(0).lower() for m in outcome_re.finditer(question)))
    return _assemble(
        vocabulary=vocabulary,
        disease_tags=disease_tags,
        decision_tags=decision_tags,
        primary_disease=choose_primary_disease(disease_tags, vocabulary),
        primary_decision=primary_decision,
        patient=patient,
        intervention=intervention,
        comparison=comparison,
        outcome=", ".join(outcomes),
        condition="",
        source="vocabulary",
    )


def _llm_prompt(question: str, vocabulary: Vocabulary) -> str:
    diseases = ", ".join(sorted(vocabulary.codes(DISEASE)))
    decisions = ", ".join(sorted(vocabulary.codes(DECISION)))
    return (
        "Extract the PICO of this clinical question as one JSON object with the keys patient, intervention, "
        "comparison, outcome, condition, disease_tags, decision_tags, primary_disease_tag, primary_decision_tag. "
        f"Use only these disease tags: {diseases}. Use only these decision tags: {decisions}. "
        "Use empty strings for parts the question does not state. Reply with the JSON object only.\n\n"
        f"QUESTION: {question}"
    )


def extract_pico(
    question: str,
    *,
    vocabulary: Vocabulary,
    llm_json: LlmJson | None = None,
    spelled_out: Sequence[str] = (),
    spelled_phrases: Sequence[tuple[str, int, int]] = (),
) -> Pico:
    """Return the question's PICO: the model's when it answers valid JSON, else the vocabulary's.

    `spelled_out`, `spelled_phrases`: what the question's abbreviations stand for (see `extract_pico_rules`).
    """
    rules = extract_pico_rules(
        question, vocabulary=vocabulary, spelled_out=spelled_out, spelled_phrases=spelled_phrases
    )
    if llm_json is None:
        return rules
    try:
        raw = llm_json(_llm_prompt(question, vocabulary), PICO_JSON_SCHEMA)
        jsonschema.validate(raw, PICO_JSON_SCHEMA)
    except (jsonschema.ValidationError, json.JSONDecodeError, ValueError, TypeError, KeyError) as exc:
        logger.warning("pico_llm_invalid", error=str(exc)[:300])
        return _with_note(rules, f"model PICO rejected ({type(exc).__name__}); vocabulary extractor used")
    except Exception as exc:  # provider errors of any kind must not break the answer
        logger.warning("pico_llm_failed", error=str(exc)[:300])
        return _with_note(rules, f"model unavailable ({type(exc).__name__}); vocabulary extractor used")
    known_disease, known_decision = vocabulary.codes(DISEASE), vocabulary.codes(DECISION)
    disease_tags = [t for t in dict.fromkeys(str(t).lower() for t in raw["disease_tags"]) if t in known_disease]
    decision_tags = [t for t in dict.fromkeys(str(t).lower() for t in raw["decision_tags"]) if t in known_decision]
    dropped = set(map(str.lower, raw["disease_tags"] + raw["decision_tags"])) - set(disease_tags) - set(decision_tags)
    if not disease_tags:
        return _with_note(rules, "model PICO had no known disease tag; vocabulary extractor used")
    # The vocabulary's matches are evidence from the text itself: keep any the model missed.
    disease_tags += [t for t in rules.disease_tags if t not in disease_tags]
    decision_tags += [t for t in rules.decision_tags if t not in decision_tags]
    return _assemble(
        vocabulary=vocabulary,
        disease_tags=disease_tags,
        decision_tags=decision_tags,
        primary_disease=raw.get("primary_disease_tag"),
        primary_decision=raw.get("primary_decision_tag"),
        patient=raw["patient"] or rules.patient,
        intervention=raw["intervention"] or rules.intervention,
        comparison=raw["comparison"] or rules.comparison,
        outcome=raw["outcome"] or rules.outcome,
        condition=raw["condition"],
        source="llm",
        notes=[f"dropped tags not in the vocabulary: {', '.join(sorted(dropped))}"] if dropped else [],
    )


def _with_note(pico: Pico, note: str) -> Pico:
    return Pico(**{**pico.to_dict(), "notes": [*pico.notes, note]})
