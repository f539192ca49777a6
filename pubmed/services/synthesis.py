"""Summarise the evidence retrieved for a drug/disease pair: study types, strength, key findings.

Every key finding cites only PMIDs of abstracts that were actually passed in (retrieved); an LLM
synthesiser (registered with `register_llm_synthesiser`, used when a provider is configured) is
checked against that rule, its unverifiable findings dropped, and the deterministic summary used
if nothing verifiable remains.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import structlog
from django.conf import settings

from evidence.text import split_sentences

logger = structlog.get_logger(__name__)

MAX_FINDINGS = 6


class AbstractLike(Protocol):
    pmid: str
    title: str
    publication_types: list[str]


@dataclass(frozen=True)
class KeyFinding:
    text: str
    pmids: list[str]


@dataclass(frozen=True)
class EvidenceSummary:
    summary: str
    study_count: int
    study_types: dict[str, int]
    strength: str  # "high" | "moderate" | "low" | "insufficient"
    key_findings: list[KeyFinding] = field(default_factory=list)
    supporting_pmids: list[str] = field(default_factory=list)


# Most to least rigorous; the first match decides an abstract's study type.
STUDY_TYPES: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("meta-analysis", ("Meta-Analysis",), ("meta-analysis", "meta analysis")),
    ("systematic review", ("Systematic Review",), ("systematic review",)),
    ("randomized controlled trial", ("Randomized Controlled Trial",), ("randomized", "randomised")),
    ("clinical trial", ("Clinical Trial", "Clinical Trial, Phase I", "Clinical Trial, Phase II",
                        "Clinical Trial, Phase III", "Clinical Trial, Phase IV", "Controlled Clinical Trial"),
     ("phase ii", "phase iii", "phase 2", "phase 3", "clinical trial")),
    ("guideline", ("Practice Guideline", "Guideline"), ("guideline",)),
    ("cohort study", ("Observational Study",), ("cohort", "prospective", "retrospective")),
    ("case report", ("Case Reports",), ("case report",)),
    ("review", ("Review",), ("review",)),
]
_RANK = {name: index for index, (name, _, _) in enumerate(STUDY_TYPES)}


def study_type(abstract: AbstractLike) -> str:
    """Classify an abstract by publication type, else by words in its title; 'other' if neither."""
    types = set(getattr(abstract, "publication_types", []) or [])
    for name, publication_types, _ in STUDY_TYPES:
        if types & set(publication_types):
            return name
    title = (abstract.title or "").lower()
    for name, _, words in STUDY_TYPES:
        if any(word in title for word in words):
            return name
    return "other"


def evidence_strength(study_types: Counter[str] | dict[str, int]) -> str:
    """Grade the body of evidence from its study designs."""
    counts = Counter(study_types)
    if not sum(counts.values()):
        return "insufficient"
    if counts["meta-analysis"] + counts["systematic review"] >= 1 or counts["randomized controlled trial"] >= 2:
        return "high"
    if counts["randomized controlled trial"] >= 1 or counts["clinical trial"] + counts["cohort study"] >= 2:
        return "moderate"
    return "low"


def _abstract_text(abstract: object) -> str:
    return str(getattr(abstract, "abstract", "") or getattr(abstract, "text", "") or "")


def _conclusion(abstract: object, terms: Sequence[str]) -> str:
    """Return the abstract's conclusion: its CONCLUSION section, else the last sentence(s) naming a term."""
    sections = getattr(abstract, "sections", None) or []
    for section in sections:
        label = section.get("label", "") if isinstance(section, dict) else getattr(section, "label", "")
        text = section.get("text", "") if isinstance(section, dict) else getattr(section, "text", "")
        if re.match(r"conclusion|interpretation|findings", label or "", re.IGNORECASE) and text:
            return " ".join(split_sentences(text)[:2])
    text = re.sub(r"^[A-Z][A-Z ,/&-]{2,40}: ", "", _abstract_text(abstract).split("\n\n")[-1])
    sentences = split_sentences(text)
    if not sentences:
        return ""
    relevant = [s for s in sentences if any(term.lower() in s.lower() for term in terms)]
    return (relevant or sentences)[-1]


LlmSynthesiser = Callable[[str, str, Sequence[object]], dict]
_llm_synthesiser: LlmSynthesiser | None = None


def register_llm_synthesiser(synthesiser: LlmSynthesiser | None) -> None:
    """Use `synthesiser(drug, disease, abstracts) -> {"summary", "key_findings": [{"text", "pmids"}]}`."""
    global _llm_synthesiser
    _llm_synthesiser = synthesiser


def _verified_findings(raw: object, retrieved: set[str]) -> list[KeyFinding]:
    findings = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict):
            continue
        text = " ".join(str(item.get("text", "")).split())
        pmids = [str(p).strip() for p in item.get("pmids", []) if str(p).strip() in retrieved]
        unknown = [str(p) for p in item.get("pmids", []) if str(p).strip() not in retrieved]
        if unknown:
            logger.warning("synthesis_finding_unverified_pmids", pmids=unknown)
        if text and pmids:
            findings.append(KeyFinding(text=text, pmids=list(dict.fromkeys(pmids))))
    return findings[:MAX_FINDINGS]


def synthesize(drug: str, disease: str, abstracts: Sequence[AbstractLike]) -> EvidenceSummary:
    """Summarise `abstracts` (retrieved for drug/disease) into an EvidenceSummary citing only them."""
    unique = list({str(a.pmid): a for a in abstracts}.values())
    retrieved = {str(a.pmid) for a in unique}
    kinds = {str(a.pmid): study_type(a) for a in unique}
    counts = Counter(kinds.values())
    strength = evidence_strength(counts)
    ordered = sorted(unique, key=lambda a: (_RANK.get(kinds[str(a.pmid)], len(_RANK)), -(getattr(a, "year", 0) or 0)))
    findings = []
    for abstract in ordered:
        sentence = _conclusion(abstract, [drug, disease])
        if sentence:
            findings.append(KeyFinding(text=sentence, pmids=[str(abstract.pmid)]))
        if len(findings) >= MAX_FINDINGS:
            break
    if unique:
        described = ", ".join(f"{n} {name}{'s' if n > 1 and not name.endswith('s') else ''}"
                              for name, n in sorted(counts.items(), key=lambda kv: _RANK.get(kv[0], 99)))
        summary = (
            f"{len(unique)} retrieved stud{'y' if len(unique) == 1 else 'ies'} on {drug} for {disease} "
            f"({described}); strength of evidence: {strength}."
        )
    else:
        summary = f"No studies on {drug} for {disease} were retrieved; the evidence is insufficient."
    if unique and getattr(settings, "LLM_PROVIDER", "extractive") != "extractive" and _llm_synthesiser:
        try:
            proposed = _llm_synthesiser(drug, disease, unique)
            verified = _verified_findings(proposed.get("key_findings"), retrieved)
            if verified:
                findings = verified
                summary = " ".join(str(proposed.get("summary", "")).split()) or summary
        except Exception as exc:
            logger.warning("llm_synthesis_failed", error=f"{type(exc).__name__}: {exc}")
    supporting = list(dict.fromkeys(p for finding in findings for p in finding.pmids))
    return EvidenceSummary(
        summary=summary,
        study_count=len(unique),
        study_types=dict(counts),
        strength=strength,
        key_findings=findings,
        supporting_pmids=supporting,
    )
