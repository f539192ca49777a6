"""Summarise the top abstracts of an Evidence Scout run into an EvidenceSummary whose every finding is cited.

Key findings may cite only the abstracts passed in (the scout's top five). With an LLM (a
`JsonCompleter`) the model writes the summary and findings in schema-validated JSON; any PMID it cites
outside the five is removed, a finding left without a citation is removed, and every remaining
finding and summary sentence must pass the same claim verification as chat answers
(`evidence.claims.judge_claim`: meaning, numbers, negation and direction, names) against the abstracts
it cites, or it is removed too. Every removal is recorded. Without an LLM, or when nothing the model
wrote survives, the findings are the abstracts' own conclusion sentences (checked the same way).
Study types come from publication types (then title words); strength from design and consistency.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

from evidence.claims import CONTRADICTED, PassageCache, PassageText, judge_claim, states_no_effect
from evidence.screening import without_instructions
from evidence.sentences import split_sentences
from pubmed.embeddings import embed_cached
from pubmed.prompts import SYNTHESIS_SCHEMA, JsonCompleter, checked_reply, synthesis_prompt

logger = structlog.get_logger(__name__)

MAX_FINDINGS = 6
STRENGTHS = ("insufficient", "low", "moderate", "high")


@dataclass(frozen=True)
class KeyFinding:
    text: str
    pmids: list[str]
    quote: str = ""  # the sentence(s) of the cited abstract that support it


@dataclass(frozen=True)
class EvidenceSummary:
    summary: str
    study_count: int
    study_types: dict[str, int]
    strength: str  # "high" | "moderate" | "low" | "insufficient"
    key_findings: list[KeyFinding] = field(default_factory=list)
    supporting_pmids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SynthesisOutcome:
    summary: EvidenceSummary
    method: str  # "llm" | "extractive"
    removed: list[dict[str, Any]] = field(default_factory=list)  # [{"text", "pmids", "reason"}]
    note: str = ""


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


def study_type(abstract: Any) -> str:
    """Classify an abstract by publication type, else by words in its title; 'other' if neither."""
    types = set(getattr(abstract, "publication_types", []) or [])
    for name, publication_types, _ in STUDY_TYPES:
        if types & set(publication_types):
            return name
    title = (getattr(abstract, "title", "") or "").lower()
    for name, _, words in STUDY_TYPES:
        if any(word in title for word in words):
            return name
    return "other"


def design_strength(study_types: Counter[str] | dict[str, int]) -> str:
    """Grade a body of evidence from its study designs alone."""
    counts = Counter(study_types)
    if not sum(counts.values()):
        return "insufficient"
    if counts["meta-analysis"] + counts["systematic review"] >= 1 or counts["randomized controlled trial"] >= 2:
        return "high"
    if counts["randomized controlled trial"] >= 1 or counts["clinical trial"] + counts["cohort study"] >= 2:
        return "moderate"
    return "low"


def consistent(findings: Sequence[KeyFinding]) -> bool:
    """Return False when some findings report an effect and others report none (negated)."""
    negated = {states_no_effect(finding.text) for finding in findings}
    return len(negated) < 2


def evidence_strength(study_types: Counter[str] | dict[str, int], findings: Sequence[KeyFinding]) -> str:
    """Grade from design, one level lower when the findings disagree about whether there is an effect."""
    grade = design_strength(study_types)
    if grade not in {"insufficient", "low"} and not consistent(findings):
        grade = STRENGTHS[STRENGTHS.index(grade) - 1]
    return grade


def _section_text(section: Any, name: str) -> str:
    return str(section.get(name, "") if isinstance(section, dict) else getattr(section, name, ""))


def conclusion_sentence(abstract: Any, terms: Sequence[str]) -> str:
    """Return the abstract's conclusion: its CONCLUSION section's first sentences, else its last paragraph's
    sentence that best names `terms` (the drug counting most), the later one on a tie."""
    for section in getattr(abstract, "sections", None) or []:
        label, text = _section_text(section, "label"), _section_text(section, "text")
        if re.match(r"conclusion|interpretation", label, re.IGNORECASE) and text:
            return " ".join(split_sentences(text)[:2])
    body = str(getattr(abstract, "abstract", "") or "")
    text = re.sub(r"^[A-Z][A-Z ,/&-]{2,40}: ", "", body.split("\n\n")[-1])
    sentences = split_sentences(text)
    if not sentences:
        return ""
    # Prefer a sentence naming the drug (the first term), then one naming another term; later beats earlier.
    def score(index: int) -> tuple[int, int]:
        text = sentences[index].lower()
        named = [term.lower() in text for term in terms]
        return (2 * named[0] + any(named[1:]) if named else 0, index)

    return sentences[max(range(len(sentences)), key=score)]


def _passage(abstract: Any) -> PassageText:
    text = without_instructions(
        "\n".join(filter(None, [str(getattr(abstract, "title", "") or ""), str(abstract.abstract or "")]))
    )
    return PassageText(doc_id=f"pmid:{abstract.pmid}", chunk_id="abstract", text=text)


class _Verifier:
    """Judge statements against the five abstracts, embedding each abstract's sentences once."""

    def __init__(self, abstracts: Sequence[Any]) -> None:
        self.passages = {str(a.pmid): _passage(a) for a in abstracts}
        self.cache = PassageCache()

    def check(self, text: str, pmids: Sequence[str]) -> tuple[bool, str, str]:
        """Return (supported, quote, reason) for `text` against the abstracts of `pmids`; the quote is the
        supporting sentence, or for a contradicted statement the sentence that contradicts it."""
        passages = [self.passages[p] for p in pmids if p in self.passages]
        verdict = judge_claim(text, passages, embed=embed_cached, cache=self.cache)
        quote = " ".join(q.quote for q in verdict.support)
        if verdict.verdict == CONTRADICTED:
            return False, quote, f"contradicted: {verdict.reason}"
        return verdict.supported, quote, verdict.reason


def _extractive(drug: str, disease: str, abstracts: Sequence[Any], verifier: _Verifier,
                removed: list[dict[str, Any]]) -> list[KeyFinding]:
    findings: list[KeyFinding] = []
    for abstract in abstracts:
        sentence = conclusion_sentence(abstract, [drug, disease])
        if not sentence:
            continue
        supported, quote, reason = verifier.check(sentence, [str(abstract.pmid)])
        if supported:
            findings.append(KeyFinding(text=sentence, pmids=[str(abstract.pmid)], quote=quote or sentence))
        else:
            removed.append({"text": sentence, "pmids": [str(abstract.pmid)], "reason": reason})
    return findings[:MAX_FINDINGS]


def _llm_findings(reply: dict[str, Any], verifier: _Verifier, removed: list[dict[str, Any]]) -> list[KeyFinding]:
    allowed = set(verifier.passages)
    findings: list[KeyFinding] = []
    for item in reply["key_findings"]:
        text = " ".join(item["text"].split())
        cited = list(dict.fromkeys(p.strip() for p in item["pmids"]))
        outside = [p for p in cited if p not in allowed]
        if outside:
            removed.append({"text": text, "pmids": outside,
                            "reason": f"PMID {', '.join(outside)} is not one of the abstracts this summary may cite"})
        kept = [p for p in cited if p in allowed]
        if not kept:
            continue
        supported, quote, reason = verifier.check(text, kept)
        if supported:
            findings.append(KeyFinding(text=text, pmids=kept, quote=quote))
        else:
            removed.append({"text": text, "pmids": kept, "reason": reason})
    return findings[:MAX_FINDINGS]


def _described(counts: Counter[str]) -> str:
    return ", ".join(
        f"{n} {name}{'s' if n > 1 and not name.endswith('s') else ''}"
        for name, n in sorted(counts.items(), key=lambda kv: (_RANK.get(kv[0], 99), kv[0]))
    )


def synthesize(
    *, drug: str, disease: str, abstracts: Sequence[Any], complete: JsonCompleter | None = None
) -> SynthesisOutcome:
    """Summarise `abstracts` (the scout's top five, best first) for `drug` treating `disease`."""
    unique = list({str(a.pmid): a for a in abstracts}.values())
    counts = Counter(study_type(a) for a in unique)
    verifier = _Verifier(unique)
    removed: list[dict[str, Any]] = []
    method, note, model_summary = "extractive", "", []
    findings: list[KeyFinding] = []
    if complete is not None and unique:
        try:
            records = [(str(a.pmid), without_instructions(a.title), without_instructions(a.abstract)) for a in unique]
            reply = checked_reply(complete, synthesis_prompt(drug=drug, disease=disease, records=records),
                                  SYNTHESIS_SCHEMA)
            findings = _llm_findings(reply, verifier, removed)
            for sentence in split_sentences(reply["summary"]):
                supported, _, reason = verifier.check(sentence, list(verifier.passages))
                if supported:
                    model_summary.append(sentence)
                else:
                    removed.append({"text": sentence, "pmids": [], "reason": reason})
            if findings:
                method = "llm"
            else:
                note = "No finding the model wrote could be verified; the abstracts' conclusions are shown instead."
        except Exception as exc:  # the extractive summary stands in
            note = f"LLM synthesis not used ({type(exc).__name__}: {exc})."
            logger.warning("scout_llm_synthesis_failed", error=f"{type(exc).__name__}: {exc}")
    if method == "extractive":
        model_summary = []
        findings = _extractive(drug, disease, unique, verifier, removed)
    strength = evidence_strength(counts, findings) if findings else "insufficient"
    lowered = bool(findings) and strength != design_strength(counts)
    if unique:
        header = (
            f"{len(unique)} top-ranked stud{'y' if len(unique) == 1 else 'ies'} on {drug} for {disease} "
            f"({_described(counts)}); strength of evidence: {strength}"
            + (", lowered because the findings disagree about an effect" if lowered else "")
            + "."
        )
    else:
        header = f"No studies on {drug} for {disease} were found; the evidence is insufficient."
    summary = EvidenceSummary(
        summary=" ".join([header, *model_summary]),
        study_count=len(unique),
        study_types=dict(counts),
        strength=strength,
        key_findings=findings,
        supporting_pmids=list(dict.fromkeys(p for finding in findings for p in finding.pmids)),
    )
    return SynthesisOutcome(summary=summary, method=method, removed=removed, note=note)
