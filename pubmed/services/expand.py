"""Stage 0 of a drug/disease search: normalise the disease name and expand into PubMed queries.

Both steps are LLM-driven when an LLM provider is configured and a hook is registered
(`register_llm_expander`, `register_llm_normaliser`); otherwise, and whenever the LLM's answer
fails validation, the deterministic versions here are used.

`expand_search_terms` builds queries along five axes, each with its own cap, 5-10 in total:
1. core — drug and disease in title/abstract or as MeSH;
2. trials — restricted to clinical-trial publication types;
3. synthesis — systematic reviews and meta-analyses;
4. mechanism — mechanism of action / pathway;
5. outcomes — efficacy, survival, response, safety.
Synonyms from the profile widen the core axis.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import structlog
from django.conf import settings
from django.core.cache import cache

from pubmed.clients import EutilsClient, EutilsError, eutils_client
from pubmed.query import MAX_QUERY_LENGTH, Concept, QueryError, build_query, check_query_syntax

logger = structlog.get_logger(__name__)

MIN_RESULTS = 3
NORMALISER_CACHE_SECONDS = 5 * 24 * 3600
MIN_QUERIES = 5
MAX_QUERIES = 10
AXIS_CAPS = {"core": 3, "trials": 2, "synthesis": 1, "mechanism": 2, "outcomes": 2}

# Terms too generic to search on their own: broadening never ends on one of these.
GENERIC_TERMS = frozenset(
    (
        "cancer", "cancers", "tumor", "tumors", "tumour", "tumours", "neoplasm", "neoplasms", "disease",
        "diseases", "disorder", "disorders", "syndrome", "syndromes", "infection", "infections", "condition",
        "conditions", "pain", "illness", "carcinoma", "lesion", "lesions", "inflammation", "failure",
        "deficiency", "injury",
    )
)
# Words dropped when a disease name finds too little: stage, course and severity qualifiers.
_QUALIFIERS = re.compile(
    r"(?<![\w-])(?:stage\s+[0-4IV]+[abc]?|grade\s+[0-4IV]+|metastatic|advanced|early|late|refractory|relapsed|recurrent|"
    r"resistant|severe|mild|moderate|chronic|acute|primary|secondary|locally|unresectable|newly\s+diagnosed|"
    r"treatment[- ]naive|progressive|persistent|adult|pediatric|paediatric|childhood|juvenile)(?![\w-])",
    re.IGNORECASE,
)
ABBREVIATIONS = {
    "nsclc": "non-small cell lung cancer",
    "sclc": "small cell lung cancer",
    "crc": "colorectal cancer",
    "hcc": "hepatocellular carcinoma",
    "rcc": "renal cell carcinoma",
    "aml": "acute myeloid leukemia",
    "all": "acute lymphoblastic leukemia",
    "cll": "chronic lymphocytic leukemia",
    "cml": "chronic myeloid leukemia",
    "dlbcl": "diffuse large b-cell lymphoma",
    "mm": "multiple myeloma",
    "tnbc": "triple-negative breast cancer",
    "t2d": "type 2 diabetes mellitus",
    "t2dm": "type 2 diabetes mellitus",
    "t1d": "type 1 diabetes mellitus",
    "copd": "chronic obstructive pulmonary disease",
    "chf": "heart failure",
    "hf": "heart failure",
    "hfref": "heart failure with reduced ejection fraction",
    "cad": "coronary artery disease",
    "ckd": "chronic kidney disease",
    "ra": "rheumatoid arthritis",
    "sle": "systemic lupus erythematosus",
    "ms": "multiple sclerosis",
    "ibd": "inflammatory bowel disease",
    "uc": "ulcerative colitis",
    "ad": "alzheimer disease",
    "pd": "parkinson disease",
    "nash": "nonalcoholic steatohepatitis",
    "nafld": "non-alcoholic fatty liver disease",
    "gerd": "gastroesophageal reflux disease",
    "afib": "atrial fibrillation",
    "af": "atrial fibrillation",
    "mi": "myocardial infarction",
    "htn": "hypertension",
    "covid": "covid-19",
    "covid19": "covid-19",
}


@dataclass(frozen=True)
class ExpansionProfile:
    """What is known about the drug and disease beyond their names (all optional)."""

    drug_synonyms: tuple[str, ...] = ()
    disease_synonyms: tuple[str, ...] = ()
    drug_class: str = ""
    mechanism: str = ""
    population: str = ""

    @classmethod
    def from_value(cls, value: ExpansionProfile | Mapping[str, object] | None) -> ExpansionProfile:
        if value is None:
            return cls()
        if isinstance(value, ExpansionProfile):
            return value
        unknown = set(value) - {"drug_synonyms", "disease_synonyms", "drug_class", "mechanism", "population"}
        if unknown:
            raise ValueError(f"Unknown profile key(s): {', '.join(sorted(unknown))}.")

        def strings(key: str) -> tuple[str, ...]:
            raw = value.get(key) or ()
            items = list(raw) if isinstance(raw, Iterable) and not isinstance(raw, str) else [raw]
            return tuple(" ".join(str(item).split()) for item in items if str(item).strip())

        return cls(
            drug_synonyms=strings("drug_synonyms"),
            disease_synonyms=strings("disease_synonyms"),
            drug_class=" ".join(str(value.get("drug_class") or "").split()),
            mechanism=" ".join(str(value.get("mechanism") or "").split()),
            population=" ".join(str(value.get("population") or "").split()),
        )


@dataclass(frozen=True)
class ExpandedQuery:
    axis: str
    query: str


@dataclass(frozen=True)
class NormalisedDisease:
    original: str
    normalised: str
    count: int | None  # PubMed hits for the normalised name; None when NCBI could not be asked
    broadened: bool = False
    source: str = "deterministic"
    tried: list[str] = field(default_factory=list)


LlmExpander = Callable[[str, str, ExpansionProfile], Sequence[tuple[str, str]]]
LlmNormaliser = Callable[[str], str]
_llm_expander: LlmExpander | None = None
_llm_normaliser: LlmNormaliser | None = None


def register_llm_expander(expander: LlmExpander | None) -> None:
    """Use `expander(drug, disease, profile) -> [(axis, query), ...]` when an LLM is configured."""
    global _llm_expander
    _llm_expander = expander


def register_llm_normaliser(normaliser: LlmNormaliser | None) -> None:
    """Use `normaliser(disease) -> normalised name` when an LLM is configured."""
    global _llm_normaliser
    _llm_normaliser = normaliser


def _llm_enabled() -> bool:
    return getattr(settings, "LLM_PROVIDER", "extractive") != "extractive"


def deterministic_expansion(*, drug: str, disease: str, profile: ExpansionProfile) -> list[ExpandedQuery]:
    """Build the five-axis query set without a model."""
    drug_concept = Concept(synonyms=[drug, *profile.drug_synonyms][:4])
    disease_concept = Concept(synonyms=[disease, *profile.disease_synonyms][:4])

    def both(*extra: Concept) -> str:
        return build_query([drug_concept, disease_concept, *extra])

    queries: list[ExpandedQuery] = [
        ExpandedQuery("core", both()),
        ExpandedQuery("core", build_query([Concept(mesh=[drug]), Concept(mesh=[disease])])),
    ]
    if profile.population:
        queries.append(ExpandedQuery("core", both(Concept(synonyms=[profile.population]))))
    queries += [
        ExpandedQuery("trials", both(Concept(publication_types=["randomized controlled trial", "clinical trial"]))),
        ExpandedQuery("trials", both(Concept(synonyms=["phase 3", "phase III", "phase 2", "phase II"]))),
        ExpandedQuery("synthesis", both(Concept(publication_types=["systematic review", "meta-analysis"]))),
        ExpandedQuery(
            "mechanism", both(Concept(synonyms=["mechanism", "pathway", "mode of action", "mechanism of action"]))
        ),
    ]
    if profile.mechanism or profile.drug_class:
        mechanism = Concept(synonyms=[t for t in (profile.mechanism, profile.drug_class) if t])
        queries.append(ExpandedQuery("mechanism", build_query([mechanism, disease_concept])))
    queries += [
        ExpandedQuery("outcomes", both(Concept(synonyms=["efficacy", "survival", "response", "outcome*"]))),
        ExpandedQuery("outcomes", both(Concept(synonyms=["safety", "adverse", "toxicity"]))),
    ]
    return queries


def _apply_caps(queries: Sequence[ExpandedQuery]) -> list[ExpandedQuery]:
    kept: list[ExpandedQuery] = []
    per_axis: dict[str, int] = {}
    seen: set[str] = set()
    for item in queries:
        if item.axis not in AXIS_CAPS or item.query in seen:
            continue
        if per_axis.get(item.axis, 0) >= AXIS_CAPS[item.axis]:
            continue
        per_axis[item.axis] = per_axis.get(item.axis, 0) + 1
        seen.add(item.query)
        kept.append(item)
    return kept[:MAX_QUERIES]


def _usable_model_query(query: str) -> bool:
    """Return True if a model-written query is non-empty, within the length cap and balanced."""
    if not query or len(query) > MAX_QUERY_LENGTH:
        return False
    try:
        check_query_syntax(query)
    except QueryError:
        return False
    return True


def expand_search_terms(
    drug: str, disease: str, profile: ExpansionProfile | Mapping[str, object] | None = None
) -> list[ExpandedQuery]:
    """Return 5-10 PubMed queries for evidence on `drug` treating `disease`, at most AXIS_CAPS per axis."""
    drug, disease = " ".join(drug.split()), " ".join(disease.split())
    if not drug or not disease:
        raise ValueError("Both a drug and a disease are needed to expand search terms.")
    profile = ExpansionProfile.from_value(profile)
    if _llm_enabled() and _llm_expander is not None:
        try:
            proposed = [ExpandedQuery(str(axis), " ".join(str(query).split()))
                        for axis, query in _llm_expander(drug, disease, profile)]
            capped = _apply_caps([q for q in proposed if _usable_model_query(q.query)])
            if len(capped) >= MIN_QUERIES:
                return capped
            logger.warning("llm_expansion_too_few", kept=len(capped))
        except Exception as exc:  # fall back to the deterministic expansion
            logger.warning("llm_expansion_failed", error=f"{type(exc).__name__}: {exc}")
    return _apply_caps(deterministic_expansion(drug=drug, disease=disease, profile=profile))


def clean_disease_name(name: str) -> str:
    """Lower-case, drop possessives and punctuation, and spell out known abbreviations."""
    text = " ".join(name.split()).strip(" .,;:")
    text = re.sub(r"(\w)'s\b", r"\1", text)
    text = re.sub(r"[^\w\s\-/]", " ", text)
    text = " ".join(text.split()).lower()
    return ABBREVIATIONS.get(text.replace("-", "").replace(" ", ""), text)


def broaden_disease_name(name: str) -> str:
    """Return `name` without stage/severity/course qualifiers, or '' if that leaves a generic term."""
    broader = " ".join(_QUALIFIERS.sub(" ", name).split()).strip(" -")
    if not broader or broader == name or broader in GENERIC_TERMS:
        return ""
    return broader


def _pubmed_count(term: str, client: EutilsClient) -> int:
    return client.esearch(build_query([Concept(synonyms=[term], mesh=[term])]), retmax=0).count


def normaliser_cache_key(disease: str) -> str:
    digest = hashlib.sha256(" ".join(disease.split()).lower().encode()).hexdigest()[:32]
    return f"pubmed:disease-normalised:v1:{digest}"


def normalise_disease_name(disease: str, *, client: EutilsClient | None = None) -> NormalisedDisease:
    """Normalise a disease name and check PubMed knows it (≥ MIN_RESULTS hits), broadening once if not.

    Results are cached for five days. If NCBI cannot be reached the cleaned name is returned with
    count None (and not cached), so a search can still go ahead.
    """
    original = " ".join(disease.split())
    if not original:
        raise ValueError("The disease name is empty.")
    cache_key = normaliser_cache_key(original)
    cached = cache.get(cache_key)
    if isinstance(cached, NormalisedDisease):
        return cached
    source = "deterministic"
    candidate = clean_disease_name(original)
    if _llm_enabled() and _llm_normaliser is not None:
        try:
            proposed = clean_disease_name(str(_llm_normaliser(original)))
            if proposed and proposed not in GENERIC_TERMS and len(proposed) <= 200:
                candidate, source = proposed, "llm"
        except Exception as exc:
            logger.warning("llm_normalise_failed", error=f"{type(exc).__name__}: {exc}")
    client = client or eutils_client()
    tried = [candidate]
    try:
        count = _pubmed_count(candidate, client)
        result = NormalisedDisease(original=original, normalised=candidate, count=count, source=source, tried=tried)
        if count < MIN_RESULTS:
            broader = broaden_disease_name(candidate)
            if broader:
                tried.append(broader)
                broader_count = _pubmed_count(broader, client)
                if broader_count > count:
                    result = NormalisedDisease(
                        original=original, normalised=broader, count=broader_count, broadened=True,
                        source=source, tried=tried,
                    )
    except EutilsError as exc:
        logger.warning("disease_normalise_unverified", disease=original, error=str(exc))
        return NormalisedDisease(original=original, normalised=candidate, count=None, source=source, tried=tried)
    cache.set(cache_key, result, NORMALISER_CACHE_SECONDS)
    return result
