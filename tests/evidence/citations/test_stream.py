from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.citations.parse import identifiers_in
from evidence.citations.stream import StreamScrubber
from tests.evidence.citations.sources import ALLOWED, evidence, fragment

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
