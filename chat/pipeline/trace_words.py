""""How this answer was built" for the reader: each step of the run in one plain sentence.

The steps record what they decided as data and in a developer's words (`TraceStep.detail`: scores,
thresholds, queries); the page shows this sentence, with the developer's line folded under it.
A step this module has no sentence for, or whose data it cannot read, is shown by its label.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def _loaded(value: Any) -> Any:
    """Steps store long structures as JSON text; return them as Python values."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _listed(items: Sequence[str]) -> str:
    items = list(dict.fromkeys(item for item in items if item))
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _understand(data: Mapping[str, Any]) -> str:
    concepts = _loaded(data.get("concepts")) or []
    conditions = [c["label"] for c in concepts if c.get("role") == "condition"]
    decisions = [c["label"] for c in concepts if c.get("role") == "decision"]
    defined = [f"{d['short']} as {d['long']}" for d in data.get("defined_shorthand") or []]
    # Shorthand no curated row knows, read as the stored abstracts define it: the reader can see how it was read.
    them = "it" if len(defined) == 1 else "them"
    read = f" Read {_listed(defined)}, as stored abstracts define {them}." if defined else ""
    # Where the patient is treated is context: a source need not say it ("inpatient, about to be discharged").
    settings = _listed([c["label"] for c in concepts if c.get("context")])
    read += f" Read {settings} as where the patient is treated: context a source need not mention." if settings else ""
    if not conditions and not decisions:
        return "Found no condition or treatment decision the library knows in the question." + read
    about = f"about {_listed(conditions)}" if conditions else "about a condition the library does not know"
    asked = f", asking about {_listed(decisions)}" if decisions else ""
    return f"Read the question as one {about}{asked}.{read}"


def _classify(data: Mapping[str, Any]) -> str:
    classification = data.get("classification") or ""
    if not classification:
        return "Matched none of the library's clinical scenarios."
    anchors = len(data.get("anchors") or [])
    return f"Matched the library's scenario “{classification}”" + (
        f", which has {_count(anchors, 'anchor study', 'anchor studies')}." if anchors else "."
    )


def _library(data: Mapping[str, Any]) -> str:
    studies = len(data.get("studies") or [])
    if not studies:
        return "No study of the curated library is on these topics."
    return f"Found {_count(studies, 'curated library study', 'curated library studies')} on these topics."


def _retrieve(data: Mapping[str, Any]) -> str:
    if data.get("error"):
        return "The search of stored PubMed abstracts failed, so only the library was used."
    hits = len(data.get("hits") or [])
    if not hits:
        return "No stored PubMed abstract matched the question."
    return f"Found {_count(hits, 'passage', 'passages')} of stored PubMed abstracts close to the question."


def _judge(data: Mapping[str, Any]) -> str:
    judgements = _loaded(data.get("judgements")) or []
    kept = [j for j in judgements if j.get("addresses")]
    aside = len(judgements) - len(kept)
    if not judgements:
        return "No source was found to judge."
    if not kept:
        return f"None of the {_count(len(judgements), 'source', 'sources')} found addresses the question."
    return f"Kept {_count(len(kept), 'source that addresses', 'sources that address')} the question" + (
        f" and set {aside} aside as not about it." if aside else "."
    )


def _rank(data: Mapping[str, Any]) -> str:
    kept = len(_loaded(data.get("kept")) or [])
    if not kept:
        return "No source was left to put in order."
    return f"Put the {_count(kept, 'kept source', 'kept sources')} in order, the curated anchor studies first."


def _live_search(data: Mapping[str, Any]) -> str:
    if not data.get("ran"):
        return "Did not search PubMed now: it could not be reached a moment ago, so stored evidence was used."
    if data.get("error") or data.get("unavailable"):
        return "Could not reach PubMed, so only stored evidence was used."
    if data.get("busy"):
        return "PubMed's shared request budget was in use by other answers, so stored evidence was used."
    found, new = int(data.get("found") or 0), int(data.get("new") or 0)
    if not found:
        return "Searched PubMed for the question; it found nothing more."
    return f"Searched PubMed for the question: {_count(found, 'article', 'articles')} found, {new} new to the store."


def _retractions(data: Mapping[str, Any]) -> str:
    papers = len(data.get("excluded") or []) + len(data.get("notices") or [])
    what = _count(papers, "retracted paper or retraction notice", "retracted papers or retraction notices")
    return f"Left out {what}."


def _generate(data: Mapping[str, Any]) -> str:
    if data.get("error") and not data.get("composed_by"):
        return "The language model failed, and no answer was written without it (fall-back switched off)."
    if data.get("abstained"):
        return "Wrote no answer: no admitted source addresses the question."
    if data.get("composed_by") == "extractive":
        failed = data.get("provider") not in (None, "", "extractive")
        return (
            "The language model failed, so the answer quotes the sources' own sentences instead."
            if failed
            else "Wrote the answer from sentences quoted from the sources (no language model)."
        )
    model = data.get("model") or "the configured language model"
    return f"Wrote the answer with {model}, from the kept sources only."


def _support(data: Mapping[str, Any]) -> str:
    claims = _loaded(data.get("claims")) or []
    removed = [r for r in data.get("removed") or [] if r.get("kind") == "claim"]
    if not claims and not removed:
        return "There was no statement to check."
    supported = sum(1 for claim in claims if claim.get("supported"))
    contradicted = sum(1 for r in removed if r.get("verdict") == "contradicted")
    text = (
        f"Checked every statement against the source it cites: {supported} supported, "
        f"{len(removed)} removed"
    )
    return text + (f" ({contradicted} because the source says otherwise)." if contradicted else ".")


def _verify(data: Mapping[str, Any]) -> str:
    if data.get("abstained"):
        return "Gave no answer: no source that addresses the question supports one."
    removed = len(data.get("removed") or [])
    return "Checked that every PMID, DOI and NCT number cited belongs to this answer's sources" + (
        f"; removed {_count(removed, 'identifier', 'identifiers')} that did not." if removed else "."
    )


def _confidence(data: Mapping[str, Any]) -> str:
    level = data.get("confidence") or ""
    reasons = data.get("reasons") or []
    # Every reason: the one that holds the answer below GREEN is often not the first.
    return f"{level}: {'; '.join(reasons)}." if level and reasons else f"Rated {level or 'the answer'}."


_WRITERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "understand": _understand,
    "classify": _classify,
    "library": _library,
    "retrieve": _retrieve,
    "judge": _judge,
    "rank": _rank,
    "live_search": _live_search,
    "retractions": _retractions,
    "generate": _generate,
    "support": _support,
    "verify": _verify,
    "confidence": _confidence,
}


def step_sentence(step: str, label: str, data: Mapping[str, Any], *, again: bool = False) -> str:
    """Return the reader's sentence for one step; `again` for a step run a second time (after the live search,
    whether or not it reached PubMed)."""
    writer = _WRITERS.get(step)
    try:
        sentence = writer(data) if writer else ""
    except (AttributeError, KeyError, TypeError, ValueError):  # data in an older shape: the label says enough
        sentence = ""
    sentence = sentence or f"{label}."
    return f"Judged again after the live search: {sentence[0].lower()}{sentence[1:]}" if again else sentence
