"""Disease-name normaliser of the Evidence Scout: normalise → verify with PubMed → broaden once if too rare.

1. Normalise: the model's standard name when an LLM is configured (validated), otherwise the rules
   (case, punctuation, possessives, curated abbreviations spelled out).
2. Verify: count PubMed records for `drug AND disease`.
3. If fewer than MIN_RESULTS, broaden once: the model's broader term, or one level up the MeSH tree
   (a qualified name such as "metastatic melanoma" goes to its descriptor "Melanoma"; a descriptor
   goes to its parent). The broader term is accepted only if `drug AND broader` has at least
   MIN_RESULTS hits and the term is not over-generic (a `broad` word of `evidence.language`, or a MeSH tree root).
Normalisations and counts are cached in the database for `SCOUT_CACHE_SECONDS`, shared by every process.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

from evidence import language
from evidence.lexicon import Lexicon
from pubmed.clients import EutilsClient, EutilsError, EutilsUnavailable
from pubmed.mesh_tree import fold, mesh_tree
from pubmed.models import ScoutCacheKind
from pubmed.prompts import NORMALISE_SCHEMA, JsonCompleter, broaden_prompt, checked_reply, normalise_prompt
from pubmed.query import Concept, build_query
from pubmed.services.scout_cache import pubmed_count, scout_cache_get, scout_cache_key, scout_cache_put

logger = structlog.get_logger(__name__)

MIN_RESULTS = 3
MESH_CANDIDATES = 3  # parents checked at most when broadening along the MeSH tree


def _broad_folded(found: language.Words) -> frozenset[str]:
    """Never an acceptable broader disease: a search on these finds everything the drug was ever tried in."""
    return frozenset(fold(term) for term in found.of(language.WordClass.BROAD))


# Stage, course and severity words: a name carrying them is narrower than its MeSH descriptor.
_QUALIFIERS = re.compile(
    r"(?<![\w-])(?:stage\s+[0-4IV]+[abc]?|grade\s+[0-4IV]+|metastatic|advanced|early|late|refractory|relapsed|recurrent|"
    r"resistant|severe|mild|moderate|chronic|acute|primary|secondary|locally|unresectable|newly\s+diagnosed|"
    r"treatment[- ]naive|progressive|persistent|adult|pediatric|paediatric|childhood|juvenile)(?![\w-])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class NormalisedDisease:
    """The disease name a scout searches with, and how it was reached."""

    original: str
    normalised: str
    count: int | None  # PubMed hits for drug AND normalised; None when NCBI could not be asked
    source: str = "rules"  # "rules" | "llm": who normalised the name
    broadened: bool = False
    broadening: str = ""  # "llm" | "mesh" when broadening was tried
    tried: list[dict[str, Any]] = field(default_factory=list)  # [{"term", "count", "verdict"}]
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def clean_disease_name(name: str) -> str:
    """Lower-case, drop possessives and punctuation, and spell out a name that is curated shorthand as a whole
    ("NSCLC", "T2DM", "MM": the `Abbreviation` table, in its usual reading)."""
    text = " ".join(name.split()).strip(" .,;:")
    text = re.sub(r"(\w)'s\b", r"\1", text)
    text = " ".join(re.sub(r"[^\w\s\-/]", " ", text).split())
    lexicon = Lexicon.load()
    for key in (text, text.upper(), text.lower(), text.lower().replace("-", "").replace(" ", "")):
        if key in lexicon.wording:
            return lexicon.wording[key][0].lower()
    return text.lower()


def is_generic(term: str) -> bool:
    """Return True if `term` is too broad to stand for a disease (blocklisted, or a MeSH tree root)."""
    return fold(term) in language.current().derived(_broad_folded) or mesh_tree().is_top_level(term)


def mesh_broader(term: str) -> list[str]:
    """Return candidates one level up the MeSH tree from `term`, nearest first ([] without the tree)."""
    tree = mesh_tree()
    if not len(tree):
        return []
    if tree.canonical(term):
        return tree.parents(term)
    stripped = " ".join(_QUALIFIERS.sub(" ", term).split()).strip(" -")
    for candidate in (stripped, stripped.replace("cancer", "neoplasms"), f"{stripped} neoplasms"):
        descriptor = tree.canonical(candidate) if candidate and candidate != term else ""
        if descriptor:
            return [descriptor]
    return []


def drug_disease_query(drug: str, disease: str) -> str:
    """Return the PubMed query `drug AND disease` (each in title/abstract or as MeSH heading)."""
    return build_query([Concept(synonyms=[drug], mesh=[drug]), Concept(synonyms=[disease], mesh=[disease])])


def _llm_name(complete: JsonCompleter, prompt: str) -> str:
    name = clean_disease_name(str(checked_reply(complete, prompt, NORMALISE_SCHEMA)["name"]))
    return "" if not name or is_generic(name) else name


def normalise_disease(
    *, drug: str, disease: str, client: EutilsClient, complete: JsonCompleter | None = None
) -> NormalisedDisease:
    """Return the disease name to search `drug` with; see the module docstring for the three steps.

    LLM failures fall back to the rules (logged). When NCBI refuses the count, the normalised name is
    returned with count None and nothing is cached, so a later run verifies it; when NCBI cannot be
    reached at all, EutilsUnavailable is raised: nothing after this step could reach it either.
    """
    drug, original = " ".join(drug.split()), " ".join(disease.split())
    if not drug or not original:
        raise ValueError("Give both a drug and a disease name.")
    key = scout_cache_key(["normalisation", drug, original, bool(complete)])
    cached = scout_cache_get(kind=ScoutCacheKind.NORMALISATION, key=key)
    if isinstance(cached, dict):
        return NormalisedDisease(**{**cached, "cached": True})
    candidate, source = clean_disease_name(original), "rules"
    if complete is not None:
        try:
            proposed = _llm_name(complete, normalise_prompt(disease=original))
            if proposed:
                candidate, source = proposed, "llm"
        except Exception as exc:  # the rules still normalise
            logger.warning("scout_llm_normalise_failed", error=f"{type(exc).__name__}: {exc}")
    tried: list[dict[str, Any]] = []
    try:
        count = pubmed_count(query=drug_disease_query(drug, candidate), client=client)
        tried.append({"term": candidate, "count": count, "verdict": "accepted" if count >= MIN_RESULTS else "too few"})
        result = NormalisedDisease(original=original, normalised=candidate, count=count, source=source, tried=tried)
        if count < MIN_RESULTS:
            result = _broaden(result, drug=drug, client=client, complete=complete)
    except EutilsUnavailable:
        raise
    except EutilsError as exc:
        logger.warning("scout_disease_unverified", disease=original, error=str(exc))
        return NormalisedDisease(original=original, normalised=candidate, count=None, source=source, tried=tried)
    value = {k: v for k, v in result.to_dict().items() if k != "cached"}
    scout_cache_put(kind=ScoutCacheKind.NORMALISATION, key=key, label=f"{drug} / {original}", value=value)
    return result


def _broaden(
    result: NormalisedDisease, *, drug: str, client: EutilsClient, complete: JsonCompleter | None
) -> NormalisedDisease:
    """Try one broader term (LLM or MeSH); return `result` updated when one qualifies, else unchanged."""
    candidates: list[str] = []
    how = "mesh"
    if complete is not None:
        try:
            proposed = _llm_name(complete, broaden_prompt(disease=result.normalised, drug=drug))
            if proposed and proposed != result.normalised:
                candidates, how = [proposed], "llm"
        except Exception as exc:
            logger.warning("scout_llm_broaden_failed", error=f"{type(exc).__name__}: {exc}")
    if not candidates:
        candidates = mesh_broader(result.normalised)[:MESH_CANDIDATES]
    tried = list(result.tried)
    for term in candidates:
        if is_generic(term):
            tried.append({"term": term, "count": None, "verdict": "too generic"})
            continue
        count = pubmed_count(query=drug_disease_query(drug, term), client=client)
        if count >= MIN_RESULTS:
            tried.append({"term": term, "count": count, "verdict": "accepted"})
            return NormalisedDisease(
                original=result.original, normalised=term, count=count, source=result.source, broadened=True,
                broadening=how, tried=tried,
            )
        tried.append({"term": term, "count": count, "verdict": "too few"})
    return NormalisedDisease(
        original=result.original, normalised=result.normalised, count=result.count, source=result.source,
        broadening=how if candidates else "", tried=tried,
    )
