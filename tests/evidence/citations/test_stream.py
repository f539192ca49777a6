from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.citations.parse import identifiers_in
from evidence.citations.stream import StreamScrubber
from tests.evidence.citations.sources import DYNAMIC, LIBRARY, REINERT, TIE_2016, UNAPPROVED, evidence

# --- streaming ----------------------------------------------------------------------------------


def test_stream_scrubber_never_releases_an_unverified_identifier_split_across_deltas():
    scrubber = StreamScrubber(evidence())
    shown = (
        "".join(
            scrubber.feed(delta)
            for delta in ["DYNAMIC (PMID: 356", "57320) helped. A fake (PMID: 1234", "5678) did too. Tail"]
        )
        + scrubber.flush()
    )
    assert shown == "DYNAMIC [1] helped. A fake did too. Tail"


# --- properties ---------------------------------------------------------------------------------

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


def _key(kind: str, value: str) -> tuple[str, str]:
    if kind == "doi":
        return kind, value.lower()
    return kind, value.upper() if kind in {"nct", "pmcid"} else value


@settings(max_examples=100, deadline=None)
@given(deltas=st.lists(fragment, max_size=25))
def test_property_streamed_preview_never_shows_an_unverified_identifier(deltas):
    scrubber = StreamScrubber(evidence())
    shown = "".join(scrubber.feed(delta + " ") for delta in deltas) + scrubber.flush()
    for kind, value in identifiers_in(shown):
        assert kind != "citation"
        assert _key(kind, value) in ALLOWED, (kind, value, shown)
