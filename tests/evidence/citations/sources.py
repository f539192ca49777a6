"""Evidence the citation tests cite: library studies, retrieved chunks, an unapproved chunk."""

from hypothesis import strategies as st

from evidence.sources import EvidenceSet, EvidenceSource

DYNAMIC = EvidenceSource(
    doc_id="pmid:35657320",
    chunk_id="key_finding",
    origin="library",
    title="Circulating Tumor DNA Analysis Guiding Adjuvant Therapy in Stage II Colon Cancer",
    text="ctDNA-guided management reduced adjuvant chemotherapy use without compromising recurrence-free survival.",
    pmid="35657320",
    doi="10.1056/NEJMoa2200075",
    pmcid="PMC9701133",
    authors_short="Tie J et al.",
    journal="N Engl J Med",
    year=2022,
    kind="trial",
    strength="moderate",
    study_name="DYNAMIC",
    names=("DYNAMIC trial", "Tie et al. NEJM 2022"),
    approved=True,
)
GALAXY = EvidenceSource(
    doc_id="pmid:36646802",
    chunk_id="key_finding",
    origin="library",
    title="GALAXY interim",
    pmid="36646802",
    study_name="CIRCULATE-Japan GALAXY (interim)",
    names=("GALAXY", "CIRCULATE-Japan"),
)
PLATFORM = EvidenceSource(
    doc_id="pmid:33931919",
    chunk_id="key_finding",
    origin="library",
    title="CIRCULATE-Japan platform",
    pmid="33931919",
    study_name="CIRCULATE-Japan platform protocol (GALAXY, VEGA, ALTAIR)",
    names=("GALAXY", "CIRCULATE-Japan", "VEGA trial"),
)
EMPEROR = EvidenceSource(
    doc_id="pmid:34449189",
    chunk_id="key_finding",
    origin="library",
    title="Empagliflozin in HFpEF",
    pmid="34449189",
    doi="10.1056/NEJMoa2107038",
    nct="NCT03057951",
    study_name="EMPEROR-Preserved",
    names=("empagliflozin HFpEF",),
)
DELIVER = EvidenceSource(
    doc_id="pmid:36027570",
    chunk_id="key_finding",
    origin="library",
    title="Dapagliflozin in HFmrEF or HFpEF",
    pmid="36027570",
    nct="NCT03619213",
    study_name="DELIVER",
)
REINERT = EvidenceSource(
    doc_id="pmid:31070691",
    chunk_id="31070691:0",
    origin="retrieved",
    title="Plasma cell-free DNA in stage I-III CRC",
    text="RESULTS: ctDNA detection after surgery predicted relapse.",
    pmid="31070691",
    authors=("Reinert T", "Henriksen TV", "Christensen E", "Sharma S"),
    journal="JAMA Oncol",
    year=2019,
    approved=True,
)
TIE_2016 = EvidenceSource(
    doc_id="pmid:27384348",
    chunk_id="27384348:1",
    origin="retrieved",
    title="ctDNA in stage II colon cancer",
    text="CONCLUSIONS: ctDNA detection identifies residual disease.",
    pmid="27384348",
    doi="10.1126/scitranslmed.aaf6219",
    journal="Sci Transl Med",
    year=2016,
    approved=True,
)
UNAPPROVED = EvidenceSource(
    doc_id="pmid:18033691",
    chunk_id="18033691:0",
    origin="retrieved",
    title="An unrelated abstract",
    pmid="18033691",
    approved=False,
)
LIBRARY = [DYNAMIC, GALAXY, PLATFORM, EMPEROR, DELIVER]


def evidence(*sources: EvidenceSource) -> EvidenceSet:
    return EvidenceSet(sources or [DYNAMIC, REINERT, TIE_2016, UNAPPROVED], library=LIBRARY)


def events(caplog, name: str) -> list[dict]:
    return [record.msg for record in caplog.records if isinstance(record.msg, dict) and record.msg.get("event") == name]


# Answer text mixing words with identifiers of every form, real and fabricated (property tests).
ALLOWED = {key for source in [DYNAMIC, REINERT, TIE_2016, UNAPPROVED, *LIBRARY] for key in source.identifier_keys()}
words = st.sampled_from(["ctDNA", "relapse", "adjuvant", "trial", "showed", "benefit", "risk", "the", "and", "colon"])
random_pmid = st.integers(min_value=1, max_value=999_999_999).map(str)
random_doi = st.builds(
    lambda a, b: f"10.{a}/{b}", st.integers(1000, 99999), st.text("abcdefXYZ0123456789.-", min_size=1, max_size=12)
)
random_nct = st.integers(0, 99_999_999).map(lambda n: f"NCT{n:08d}")
fragment = st.one_of(
    words,
    random_pmid.map(lambda p: f"(PMID: {p})"),
    random_pmid.map(lambda p: f"PMID {p}"),
    random_pmid.map(lambda p: f"[citation:pmid:{p}:0]"),
    random_pmid.map(lambda p: f"https://pubmed.ncbi.nlm.nih.gov/{p}/"),
    random_doi.map(lambda d: f"doi:{d}"),
    random_doi.map(lambda d: f"https://doi.org/{d}"),
    random_nct,
    st.integers(0, 12).map(lambda n: f"[{n}]"),
    st.sampled_from(
        [
            "(PMID: 35657320)",
            "[citation:pmid:31070691:31070691:0]",
            "NCT03057951",
            "doi:10.1126/scitranslmed.aaf6219",
            "DYNAMIC",
            "GALAXY",
            "EMPEROR-Preserved",
            "[2]",
            "(PMC9701133)",
        ]
    ),
    st.sampled_from([".", ",", "\n", "\n\n## References\n", "- "]),
)
answer_text = st.lists(fragment, max_size=40).map(" ".join)
