"""Query expansion of the Evidence Scout: organ terms, then PubMed queries along five axes.

Axes, each with its own cap (`AXIS_CAPS`), 5-10 queries in total:
- drug_name: the drug with the disease (title/abstract and MeSH), then restricted to trials; beyond its
  cap only to reach five queries: with outcome words, restricted to reviews. Every drug-name query
  keeps the disease: the drug with only its organ ("apixaban" AND "heart") finds whatever else the
  drug treats there (atrial fibrillation, not heart failure);
- synonym: each drug synonym from the profile with the disease;
- drug_class_organ: the drug's class (ATC descriptions, drug type) with the organ;
- mechanism_organ: each mechanism of action with the organ;
- target_gene: the target gene symbols with the disease.
With an LLM (a `JsonCompleter`), the model proposes organ terms and each axis's terms in
schema-validated JSON; MedCite writes the queries itself (`pubmed.query.build_query`), so model text
never becomes query syntax. Without one, rules over the profile, an organ lexicon and the tag
vocabulary (disease synonyms and MeSH headings) do it. Expansions are cached in the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import structlog

from pubmed.models import ScoutCacheKind
from pubmed.prompts import EXPANSION_SCHEMA, JsonCompleter, checked_reply, expansion_prompt
from pubmed.query import Concept, QueryError, build_query
from pubmed.services.scout_cache import scout_cache_get, scout_cache_key, scout_cache_put

logger = structlog.get_logger(__name__)

AXES = ("drug_name", "synonym", "drug_class_organ", "mechanism_organ", "target_gene")
AXIS_CAPS = {"drug_name": 3, "synonym": 2, "drug_class_organ": 2, "mechanism_organ": 2, "target_gene": 2}
MIN_QUERIES, MAX_QUERIES = 5, 10
# The drug-name axis may go past its cap, up to this, only to reach MIN_QUERIES for a bare drug name.
DRUG_NAME_FILL_CAP = 5
PROFILE_FIELDS = ("synonyms", "targets", "mechanisms", "atc_codes", "atc_descriptions", "drug_type")
PROFILE_ITEM_MAX_CHARS, PROFILE_ITEMS_MAX = 200, 20
DISEASE_SYNONYMS_MAX = 3
GENERIC_DRUG_TYPES = frozenset(
    ("protein", "small molecule", "biologic", "biological", "peptide", "antibody", "drug", "compound", "chemical",
     "vaccine", "gene therapy", "cell therapy", "oligonucleotide", "enzyme")
)

# Organ → words that name it in a disease name (adjectives and combining forms included).
ORGANS: dict[str, tuple[str, ...]] = {
    "lung": ("lung", "pulmonary", "bronch", "nsclc", "sclc", "pleura", "respiratory", "copd", "asthma"),
    "liver": ("liver", "hepat", "hcc", "cirrho", "biliary", "cholangio", "nash", "nafld"),
    "breast": ("breast", "mammary", "tnbc"),
    "colon": ("colon", "colorectal", "rectal", "rectum", "crc", "bowel", "colitis", "crohn", "intestin"),
    "stomach": ("stomach", "gastric", "gastro"),
    "pancreas": ("pancrea", "diabet", "t2d", "t1d"),
    "kidney": ("kidney", "renal", "nephr", "rcc", "ckd"),
    "bladder": ("bladder", "urothelial"),
    "prostate": ("prostat",),
    "ovary": ("ovar",),
    "uterus": ("uter", "endometri", "cervical", "cervix"),
    "skin": ("skin", "melanoma", "dermat", "cutaneous", "psoria", "eczema"),
    "brain": ("brain", "glioma", "glioblastoma", "cerebr", "alzheimer", "parkinson", "dementia", "epilep",
              "neuro", "multiple sclerosis"),
    "heart": ("heart", "cardi", "coronary", "myocard", "atrial", "ventric", "hfref", "hfpef"),
    "blood vessels": ("vascular", "arteri", "hypertension", "thrombo", "embol"),
    "blood": ("leukemia", "leukaemia", "lymphoma", "myeloma", "anemia", "anaemia", "aml", "cll", "cml", "dlbcl"),
    "thyroid": ("thyroid",),
    "joints": ("arthritis", "joint", "gout"),
    "esophagus": ("esophag", "oesophag", "gerd"),
    "head and neck": ("head and neck", "oral", "laryn", "pharyn"),
    "bone": ("bone", "osteo", "sarcoma"),
}


class ProfileError(ValueError):
    """A drug profile has unknown keys or values of the wrong type."""


@dataclass(frozen=True)
class DrugProfile:
    """What is known about the drug beyond its name; every field optional."""

    synonyms: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()  # target gene symbols, e.g. EGFR
    mechanisms: tuple[str, ...] = ()  # mechanisms of action
    atc_codes: tuple[str, ...] = ()
    atc_descriptions: tuple[str, ...] = ()  # e.g. "protein kinase inhibitors"
    drug_type: str = ""  # e.g. "small molecule", "monoclonal antibody"

    @classmethod
    def from_value(cls, value: DrugProfile | Mapping[str, Any] | None) -> DrugProfile:
        """Return the profile from a mapping (JSON), raising ProfileError that says what to fix."""
        if value is None:
            return cls()
        if isinstance(value, DrugProfile):
            return value
        if not isinstance(value, Mapping):
            raise ProfileError("The drug profile must be a JSON object, e.g. {\"targets\": [\"EGFR\"]}.")
        unknown = sorted(set(value) - set(PROFILE_FIELDS))
        if unknown:
            raise ProfileError(
                f"Unknown drug profile key(s): {', '.join(unknown)}; use {', '.join(PROFILE_FIELDS)}."
            )

        def strings(key: str) -> tuple[str, ...]:
            raw = value.get(key) or ()
            if isinstance(raw, str):
                raw = [raw]
            if not isinstance(raw, Iterable) or any(not isinstance(item, str) for item in raw):
                raise ProfileError(f"{key} must be a list of strings.")
            items = [" ".join(item.split()) for item in raw if item.strip()]
            if len(items) > PROFILE_ITEMS_MAX:
                raise ProfileError(f"{key} has {len(items)} entries; give at most {PROFILE_ITEMS_MAX}.")
            if any(len(item) > PROFILE_ITEM_MAX_CHARS for item in items):
                raise ProfileError(f"Each {key} entry must be at most {PROFILE_ITEM_MAX_CHARS} characters.")
            return tuple(dict.fromkeys(items))

        drug_type = value.get("drug_type") or ""
        if not isinstance(drug_type, str) or len(drug_type) > PROFILE_ITEM_MAX_CHARS:
            raise ProfileError(f"drug_type must be a string of at most {PROFILE_ITEM_MAX_CHARS} characters.")
        return cls(
            synonyms=strings("synonyms"),
            targets=strings("targets"),
            mechanisms=strings("mechanisms"),
            atc_codes=strings("atc_codes"),
            atc_descriptions=strings("atc_descriptions"),
            drug_type=" ".join(drug_type.split()),
        )

    def to_dict(self) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


@dataclass(frozen=True)
class ExpandedQuery:
    axis: str
    query: str


@dataclass(frozen=True)
class Expansion:
    """The queries a scout runs, the organ terms they used, and who wrote them."""

    queries: list[ExpandedQuery]
    organ_terms: list[str]
    source: str  # "llm" | "rules"
    cached: bool = False
    note: str = ""
    per_axis: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": [{"axis": q.axis, "query": q.query} for q in self.queries],
            "organ_terms": self.organ_terms,
            "source": self.source,
            "cached": self.cached,
            "note": self.note,
            "per_axis": self.per_axis,
        }


def organ_terms(disease: str) -> list[str]:
    """Return the organs a disease name points at, by the organ lexicon (first mention first)."""
    text = " ".join(disease.split()).lower()
    found: list[tuple[int, str]] = []
    for organ, words in ORGANS.items():
        positions = [m.start() for word in words for m in re.finditer(r"(?<![a-z])" + re.escape(word), text)]
        if positions:
            found.append((min(positions), organ))
    return [organ for _, organ in sorted(found)]


def disease_concept(disease: str, vocabulary: Any | None) -> Concept:
    """Return the disease as a concept: its name, tag-vocabulary synonyms and MeSH headings."""
    synonyms, mesh = [disease], [disease]
    if vocabulary is not None:
        for code in vocabulary.tags_in(disease, "disease")[:2]:
            term = vocabulary.terms[code]
            synonyms.extend([term.label, *term.synonyms])
            mesh.extend(term.mesh_terms)
    unique = list(dict.fromkeys(s for s in synonyms if len(s) > 3 or s.isupper()))
    return Concept(synonyms=unique[: 1 + DISEASE_SYNONYMS_MAX], mesh=list(dict.fromkeys(mesh))[:3])


def _query(*concepts: Concept) -> str:
    try:
        return build_query(list(concepts))
    except QueryError:
        return ""


def rules_expansion(
    *, drug: str, disease: str, profile: DrugProfile, vocabulary: Any | None = None
) -> tuple[list[ExpandedQuery], list[str]]:
    """Return the candidate queries of every axis (uncapped, in priority order) and the organ terms."""
    organs = organ_terms(disease)
    drug_c = Concept(synonyms=[drug], mesh=[drug])
    disease_c = disease_concept(disease, vocabulary)
    organ_c = Concept(synonyms=organs[:2])
    candidates: list[ExpandedQuery] = [
        ExpandedQuery("drug_name", _query(Concept(synonyms=[drug]), Concept(synonyms=list(disease_c.synonyms)))),
        ExpandedQuery("drug_name", _query(drug_c, disease_c)),
        ExpandedQuery("drug_name", _query(drug_c, disease_c, Concept(
            publication_types=["randomized controlled trial", "clinical trial"]))),
    ]
    candidates.append(ExpandedQuery("drug_name", _query(drug_c, disease_c, Concept(
        synonyms=["efficacy", "treatment outcome", "survival", "response"]))))
    candidates.append(ExpandedQuery("drug_name", _query(drug_c, disease_c, Concept(
        publication_types=["systematic review", "meta-analysis"]))))
    candidates += [ExpandedQuery("synonym", _query(Concept(synonyms=[s]), disease_c)) for s in profile.synonyms]
    # A drug type names a class only when it is specific ("monoclonal antibody", not "protein").
    specific_type = profile.drug_type and profile.drug_type.lower() not in GENERIC_DRUG_TYPES
    classes = [*profile.atc_descriptions, *([profile.drug_type] if specific_type else [])]
    if organs:
        candidates += [ExpandedQuery("drug_class_organ", _query(Concept(synonyms=[c]), organ_c)) for c in classes]
        candidates += [
            ExpandedQuery("mechanism_organ", _query(Concept(synonyms=[m]), organ_c)) for m in profile.mechanisms
        ]
    else:  # no organ named: the disease itself stands in for it
        candidates += [ExpandedQuery("drug_class_organ", _query(Concept(synonyms=[c]), disease_c)) for c in classes]
        candidates += [
            ExpandedQuery("mechanism_organ", _query(Concept(synonyms=[m]), disease_c)) for m in profile.mechanisms
        ]
    if profile.targets:
        candidates.append(ExpandedQuery("target_gene", _query(Concept(synonyms=list(profile.targets[:4])), disease_c)))
        candidates += [ExpandedQuery("target_gene", _query(Concept(synonyms=[t]), disease_c)) for t in profile.targets]
    return [c for c in candidates if c.query], organs


def apply_caps(candidates: Sequence[ExpandedQuery]) -> list[ExpandedQuery]:
    """Keep candidates in order within each axis's cap, no query twice, at most MAX_QUERIES.

    When that leaves fewer than MIN_QUERIES, further drug-name candidates (up to DRUG_NAME_FILL_CAP)
    fill the gap. The result is ordered by axis, so every axis is represented before any is cut.
    """
    kept: list[ExpandedQuery] = []
    seen: set[str] = set()
    per_axis: dict[str, int] = {}

    def take(item: ExpandedQuery, cap: int) -> None:
        if item.axis in AXIS_CAPS and item.query not in seen and per_axis.get(item.axis, 0) < cap:
            seen.add(item.query)
            per_axis[item.axis] = per_axis.get(item.axis, 0) + 1
            kept.append(item)

    for item in candidates:
        take(item, AXIS_CAPS.get(item.axis, 0))
    if len(kept) < MIN_QUERIES:
        for item in candidates:
            if item.axis == "drug_name" and len(kept) < MIN_QUERIES:
                take(item, DRUG_NAME_FILL_CAP)
    kept.sort(key=lambda item: AXES.index(item.axis))
    # Trim the most populated axes first so that each axis keeps at least one query.
    while len(kept) > MAX_QUERIES:
        counts = {axis: sum(1 for q in kept if q.axis == axis) for axis in AXES}
        widest = max(AXES, key=lambda axis: (counts[axis], AXES.index(axis)))
        drop = max(i for i, q in enumerate(kept) if q.axis == widest)
        kept.pop(drop)
    return kept


def _llm_candidates(
    *, drug: str, disease: str, profile: DrugProfile, complete: JsonCompleter, vocabulary: Any | None
) -> tuple[list[ExpandedQuery], list[str]]:
    reply = checked_reply(complete, expansion_prompt(drug=drug, disease=disease, profile=profile.to_dict()),
                          EXPANSION_SCHEMA)
    organs = list(dict.fromkeys(" ".join(o.split()).lower() for o in reply["organ_terms"] if o.strip()))[:4]
    disease_c = disease_concept(disease, vocabulary)
    organ_c = Concept(synonyms=organs[:2]) if organs else disease_c
    candidates: list[ExpandedQuery] = []
    for item in reply["queries"]:
        terms = Concept(synonyms=[" ".join(t.split()) for t in item["terms"]])
        partner = organ_c if item["axis"] in {"drug_class_organ", "mechanism_organ"} else disease_c
        candidates.append(ExpandedQuery(item["axis"], _query(terms, partner)))
    return [c for c in candidates if c.query], organs


def expand_search_terms(
    *,
    drug: str,
    disease: str,
    profile: DrugProfile | Mapping[str, Any] | None = None,
    complete: JsonCompleter | None = None,
    vocabulary: Any | None = None,
) -> Expansion:
    """Return the capped five-axis query set for `drug` and `disease`, from the cache when fresh.

    The model's candidates come first when an LLM is given; rules candidates fill any axis it left
    short, and replace it entirely when its reply fails validation or the call fails.
    """
    drug, disease = " ".join(drug.split()), " ".join(disease.split())
    if not drug or not disease:
        raise ValueError("Both a drug and a disease are needed to expand search terms.")
    profile = DrugProfile.from_value(profile)
    key = scout_cache_key(["expansion", drug, disease, profile.to_dict(), bool(complete)])
    cached = scout_cache_get(kind=ScoutCacheKind.EXPANSION, key=key)
    if isinstance(cached, dict):
        return Expansion(
            queries=[ExpandedQuery(q["axis"], q["query"]) for q in cached["queries"]],
            organ_terms=list(cached["organ_terms"]), source=cached["source"], cached=True, note=cached["note"],
            per_axis={axis: cached["per_axis"].get(axis, 0) for axis in AXES},  # jsonb keeps no key order
        )
    rules, organs = rules_expansion(drug=drug, disease=disease, profile=profile, vocabulary=vocabulary)
    source, note, candidates = "rules", "", rules
    if complete is not None:
        try:
            proposed, model_organs = _llm_candidates(
                drug=drug, disease=disease, profile=profile, complete=complete, vocabulary=vocabulary
            )
            candidates, source = proposed + rules, "llm"
            organs = model_organs or organs
        except Exception as exc:  # the rules expansion stands in for the model's
            note = f"LLM expansion not used ({type(exc).__name__}: {exc}); rules used instead."
            logger.warning("scout_llm_expansion_failed", error=f"{type(exc).__name__}: {exc}")
    queries = apply_caps(candidates)
    per_axis = {axis: sum(1 for q in queries if q.axis == axis) for axis in AXES}
    expansion = Expansion(queries=queries, organ_terms=organs, source=source, note=note, per_axis=per_axis)
    if not note:  # a failed model call is not remembered: the next run asks again
        scout_cache_put(
            kind=ScoutCacheKind.EXPANSION, key=key, label=f"{drug} / {disease}", value=expansion.to_dict()
        )
    return expansion
