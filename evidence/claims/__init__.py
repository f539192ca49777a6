"""Claim-level verification: split answers into claims, judge each against what it cites, measure citations."""

from evidence.claims.judge import (
    SIMILARITY_THRESHOLD,
    ClaimVerdict,
    Embed,
    Passage,
    PassageCache,
    PassageText,
    Quote,
    judge_claim,
    passage_sentences,
)
from evidence.claims.metrics import CitationMetrics, citation_metrics, cited_passages
from evidence.claims.names import NameMention, name_in_text, study_names
from evidence.claims.numbers import Number, missing_numbers, numbers_in
from evidence.claims.polarity import Polarity, polarity_conflict, polarity_of
from evidence.claims.splitting import (
    Claim,
    Fragment,
    citation_markers,
    dangling_fragments,
    remove_dangling,
    split_claims,
)
from evidence.claims.verbatim import verbatim_quote

__all__ = [
    "SIMILARITY_THRESHOLD",
    "CitationMetrics",
    "Claim",
    "ClaimVerdict",
    "Embed",
    "Fragment",
    "NameMention",
    "Number",
    "Passage",
    "PassageCache",
    "PassageText",
    "Polarity",
    "Quote",
    "citation_markers",
    "citation_metrics",
    "cited_passages",
    "dangling_fragments",
    "judge_claim",
    "missing_numbers",
    "name_in_text",
    "numbers_in",
    "passage_sentences",
    "polarity_conflict",
    "polarity_of",
    "remove_dangling",
    "split_claims",
    "study_names",
    "verbatim_quote",
]
