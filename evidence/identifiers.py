"""Well-formedness of the identifiers MedCite cites: PMID, DOI, NCT number, PMCID.

These are the single source of truth for identifier syntax: model validators, the citation
verifier and the API all use them.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

# PubMed ids are positive integers; the largest assigned today is 8 digits, allow headroom.
PMID_RE = re.compile(r"^[1-9][0-9]{0,8}$")
# Crossref DOI syntax: "10." + registrant (4-9 digits, optional dotted sub-parts) + "/" + suffix
# of printable non-space characters.
DOI_RE = re.compile(r"^10\.[0-9]{4,9}(?:\.[0-9]+)*/[^\s]+$")
NCT_RE = re.compile(r"^NCT[0-9]{8}$")
PMCID_RE = re.compile(r"^PMC[0-9]{1,9}$")


def is_pmid(value: str) -> bool:
    """Return True if `value` is a syntactically valid PubMed id (digits only, no leading zero)."""
    return bool(PMID_RE.fullmatch(value))


def is_doi(value: str) -> bool:
    """Return True if `value` is a DOI of the form `10.NNNN/suffix`."""
    return bool(DOI_RE.fullmatch(value))


def is_nct(value: str) -> bool:
    """Return True if `value` is a ClinicalTrials.gov id: `NCT` followed by exactly 8 digits."""
    return bool(NCT_RE.fullmatch(value))


def normalize_doi(value: str) -> str:
    """Strip URL/`doi:` prefixes, surrounding space and trailing punctuation (case is kept)."""
    value = value.strip()
    value = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", value, flags=re.IGNORECASE)
    return value.rstrip(".,;)")


def doi_key(value: str) -> str:
    """Return the comparison key of a DOI: DOIs are case-insensitive."""
    return normalize_doi(value).lower()


def url_key(url: str) -> str:
    """Return the comparison key of a web address: no scheme or "www.", host in lower case, no final slash."""
    url = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.strip(), flags=re.IGNORECASE)
    host, slash, path = url.partition("/")
    return (host.lower() + slash + path).rstrip("/")


def validate_pmid(value: str) -> None:
    if not is_pmid(value):
        raise ValidationError(
            "%(value)s is not a PMID: use the digits only, e.g. 35657320 (no 'PMID:' prefix, no leading zeros).",
            code="invalid_pmid",
            params={"value": repr(value)},
        )


def validate_doi(value: str) -> None:
    if not is_doi(value):
        raise ValidationError(
            "%(value)s is not a DOI: it must look like 10.1056/NEJMoa2200075 (no https://doi.org/ prefix).",
            code="invalid_doi",
            params={"value": repr(value)},
        )


def validate_nct(value: str) -> None:
    if not is_nct(value):
        raise ValidationError(
            "%(value)s is not an NCT number: it must be NCT followed by 8 digits, e.g. NCT03057951.",
            code="invalid_nct",
            params={"value": repr(value)},
        )


def validate_pmcid(value: str) -> None:
    if not PMCID_RE.fullmatch(value):
        raise ValidationError(
            "%(value)s is not a PMC id: it must be PMC followed by digits, e.g. PMC9701133.",
            code="invalid_pmcid",
            params={"value": repr(value)},
        )


def pubmed_url(pmid: str) -> str:
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


def pmc_url(pmcid: str) -> str:
    return f"https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/"


def doi_url(doi: str) -> str:
    return f"https://doi.org/{doi}"


def ctgov_url(nct: str) -> str:
    return f"https://clinicaltrials.gov/study/{nct}"
