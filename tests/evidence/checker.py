"""Shared pieces of the citation-checker tests: a stored real PubMed record and sentences about it.

The sentences do not hang on the verifier's judgement of borderline cases: the supported one is copied
word for word from the abstract, the unsupported one is about something the abstract never mentions,
and the unknown PMID is one the fake E-utilities server has no record of.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pubmed.models import Abstract

TRAMETINIB = "22663011"  # recorded efetch: biomcp/efetch_pubmed_22663011.xml, DOI 10.1056/NEJMoa1203421
CORONAVIRUS = "31978945"  # recorded efetch served by the fake E-utilities, not stored beforehand
UNKNOWN = "40999999"  # no recording: NCBI "returns no record"

QUOTED = (
    "Selective BRAF-inhibitor therapy improves survival, as compared with chemotherapy, "
    "but responses are often short-lived"
)
SUPPORTED = f"{QUOTED} (PMID {TRAMETINIB})."
UNRELATED = f"Daily aspirin prevents migraine attacks in teenagers (PMID {TRAMETINIB})."
UNCITED = "Melanoma is common in fair-skinned people."
NOT_FOUND = f"Trametinib doubled overall survival in uveal melanoma (PMID {UNKNOWN})."
CORONAVIRUS_QUOTED = (
    "A previously unknown betacoronavirus was discovered through the use of unbiased sequencing "
    "in samples from patients with pneumonia"
)


@pytest.fixture
def stored_trametinib(db: None, shared_data: Path) -> Abstract:
    """Store the real PubMed record of PMID 22663011 through the store service (no vectors needed)."""
    from pubmed.parsers import parse_pubmed_xml
    from pubmed.services.store import abstracts_upsert

    records = parse_pubmed_xml((shared_data / "eutils" / "biomcp" / "efetch_pubmed_22663011.xml").read_bytes())
    abstracts_upsert(records=records, embed=False)
    return Abstract.objects.get(pmid=TRAMETINIB)
