"""Claim-level verification: split answers into claims, judge each against what it cites, measure citations."""

from evidence.claims.judge import (
    SIMILARITY_THRESHOLD,
    Candidate,
    Embed,
    PassageCache,
    ScoredClaim,
    decide,
    judge_claim,
    passage_sentences,
    score_claim,
)
from evidence.claims.metrics import CitationMetrics, citation_metrics, cited_passages
from evidence.claims.model import ClaimVerifierModel, VerifierModelError, get_verifier_model
from evidence.claims.names import NameMention, name_in_text, study_names
from evidence.claims.numbers import Number, missing_numbers, numbers_in
from evidence.claims.polarity import Polarity, polarity_conflict, polarity_of, states_no_effect
from evidence.claims.splitting import (
    Claim,
    Fragment,
    citation_markers,
    dangling_fragments,
    remove_dangling,
    split_claims,
)
from evidence.claims.verbatim import verbatim_quote
from evidence.claims.verdicts import (
    CONTRADICTED,
    NOT_ENOUGH_INFO,
    SUPPORTED,
    VERDICTS,
    ClaimVerdict,
    Passage,
    PassageText,
    Quote,
)

__all__ = [
    "CONTRADICTED",
    "NOT_ENOUGH_INFO",
    "SIMILARITY_THRESHOLD",
    "SUPPORTED",
    "VERDICTS",
    "Candidate",
    "CitationMetrics",
    "Claim",
    "ClaimVerdict",
    "ClaimVerifierModel",
    "Embed",
    "Fragment",
    "NameMention",
    "Number",
    "Passage",
    "PassageCache",
    "PassageText",
    "Polarity",
    "Quote",
    "ScoredClaim",
    "VerifierModelError",
    "citation_markers",
    "citation_metrics",
    "cited_passages",
    "dangling_fragments",
    "decide",
    "get_verifier_model",
    "judge_claim",
    "missing_numbers",
    "name_in_text",
    "numbers_in",
    "passage_sentences",
    "polarity_conflict",
    "polarity_of",
    "remove_dangling",
    "score_claim",
    "split_claims",
    "states_no_effect",
    "study_names",
    "verbatim_quote",
]
