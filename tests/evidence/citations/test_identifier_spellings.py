"""No spelling of an identifier or a link gets past verification unless it is this turn's evidence.

Each example writes a made-up identifier (or a link to an arbitrary host) the way a model might:
without a scheme, behind a label, with spaces, look-alike hyphens, full-width digits or
zero-width characters inside, as Markdown or HTML link. After verification - of the whole answer
and of the streamed preview - nothing a reader could take for it remains.
"""

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.citations.stream import StreamScrubber
from evidence.citations.verify import verify_answer
from tests.evidence.citations.sources import evidence

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
DASHES = ["-", "\u2010", "\u2011", "\u2013", "\u2212"]
SENTENCE = "Statins lowered LDL cholesterol in older adults {ref}. The effect held at five years."


def _fold(text: str) -> str:
    """What a reader would read: NFKC, no invisible characters, no spacing or hyphens."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"[\s\u00ad\u200b-\u200f\u2060\ufeff\-\u2010-\u2015\u2212]", "", text).lower()


@st.composite
def spelled_digits(draw: st.DrawFn, digits: str, *, spaced: bool = True) -> str:
    """`digits` as a model might write them: full-width, split by a space or an invisible character.

    A space splits digits only after a label ("PMID 9999 9999"); a bare "(9 0000000)" is not read
    as an identifier.
    """
    if draw(st.booleans()):
        digits = "".join(chr(0xFF10 + int(d)) if draw(st.booleans()) else d for d in digits)
    cut = draw(st.integers(min_value=0, max_value=len(digits)))
    joiner = draw(st.sampled_from(["", " ", *INVISIBLE] if spaced else ["", *INVISIBLE]))
    return digits[:cut] + joiner + digits[cut:] if 0 < cut < len(digits) else digits


def _written(data: st.DataObject, pmid: str, form: str) -> str:
    if "/" in form:
        return form.format(n=pmid)
    return form.format(n=data.draw(spelled_digits(pmid, spaced=not form.startswith(("(", "[")))))


fake_pmid = st.integers(min_value=90_000_000, max_value=99_999_999).map(str)

PMID_FORMS = [
    "PMID {n}", "PMID: {n}", "PMID#{n}", "PMIDs {n}", "pmid={n}", "The PMID is {n}", "PubMed {n}", "PubMed: {n}",
    "PubMed ID {n}", "(PubMed ID is {n})", "({n})", "[{n}]", "pubmed.ncbi.nlm.nih.gov/{n}",
    "https://pubmed.ncbi.nlm.nih.gov/{n}/", "www.ncbi.nlm.nih.gov/pubmed/{n}", "http://ncbi.nlm.nih.gov/pubmed/{n}",
    "europepmc.org/article/MED/{n}", "https://europepmc.org/abstract/MED/{n}",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(data=st.data(), pmid=fake_pmid, form=st.sampled_from(PMID_FORMS))
def test_no_spelling_of_an_unverified_pmid_survives(data, pmid, form):
    written = _written(data, pmid, form)
    answer = verify_answer(text=SENTENCE.format(ref=written), evidence=evidence())
    assert pmid not in _fold(answer.text), (written, answer.text)


@settings(max_examples=80, deadline=None)
@given(
    digits=st.integers(min_value=90_000_000, max_value=99_999_999).map(str),
    dash=st.sampled_from(["", " ", "_", *DASHES]),
    middle=st.sampled_from(["", " ", *DASHES]),
    url=st.booleans(),
)
def test_no_spelling_of_an_unverified_nct_number_survives(digits, dash, middle, url):
    written = f"NCT{dash}{digits[:4]}{middle}{digits[4:]}"
    if url:
        written = f"clinicaltrials.gov/study/NCT{digits}"
    answer = verify_answer(text=SENTENCE.format(ref=written), evidence=evidence())
    assert digits not in _fold(answer.text), (written, answer.text)


DOI_FORMS = [
    "doi:10.{r}/{s}", "DOI: 10.{r} / {s}", "doi 10.{r}/ {s}", "https://doi.org/10.{r}/{s}", "doi.org/10.{r}/{s}",
    "dx.doi.org/10.{r}/{s}", "10.{r}/{s}",
]  # fmt: skip
suffix = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=3, max_size=10)


@settings(max_examples=80, deadline=None)
@given(
    registrant=st.integers(min_value=1000, max_value=99999).map(str),
    tail=suffix,
    form=st.sampled_from(DOI_FORMS),
)
def test_no_spelling_of_an_unverified_doi_survives(registrant, tail, form):
    written = form.format(r=registrant, s=f"zq{tail}")
    answer = verify_answer(text=SENTENCE.format(ref=written), evidence=evidence())
    assert f"zq{tail}" not in _fold(answer.text), (written, answer.text)


@settings(max_examples=60, deadline=None)
@given(
    registry=st.sampled_from(["ISRCTN", "ACTRN", "ChiCTR-", "DRKS", "EudraCT ", "UMIN", "CTRI/2019/"]),
    number=st.integers(min_value=10_000_000, max_value=99_999_999).map(str),
)
def test_other_trial_registry_numbers_are_removed(registry, number):
    answer = verify_answer(text=SENTENCE.format(ref=f"({registry}{number})"), evidence=evidence())
    assert number not in _fold(answer.text), answer.text


host = st.from_regex(r"[a-z]{3,10}\.(?:example|com|org|net|io|co\.uk)", fullmatch=True)
path = st.from_regex(r"[a-z0-9]{1,8}(?:/[a-z0-9]{1,8})?", fullmatch=True)
LINK_FORMS = [
    "[NEJM]({scheme}{host}/{path})", "[see here]({scheme}{host}/{path} \"title\")", "<https://{host}/{path}>",
    "{scheme}{host}/{path}", "{host}/{path}", "<a href=\"https://{host}/{path}\">the trial</a>",
    "![figure]({scheme}{host}/{path})", "https://www.google.com/search?q={path}", "https://scholar.google.com/scholar?q={path}",
]  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    host=host,
    path=path,
    scheme=st.sampled_from(["https://", "http://", "https://www.", "www."]),
    form=st.sampled_from(LINK_FORMS),
)
def test_no_link_to_a_host_outside_the_evidence_survives(host, path, scheme, form):
    written = form.format(host=host, path=path, scheme=scheme)
    answer = verify_answer(text=SENTENCE.format(ref=written), evidence=evidence())
    shown = _fold(answer.text)
    assert "http" not in shown and "www." not in shown and host.split(".")[0] + "." not in shown, (written, answer.text)
    assert "](" not in answer.text and "<a" not in answer.text


@settings(max_examples=60, deadline=None)
@given(data=st.data(), pmid=fake_pmid, form=st.sampled_from(PMID_FORMS), cuts=st.lists(st.integers(1, 80), max_size=6))
def test_the_streamed_preview_never_shows_an_unverified_pmid(data, pmid, form, cuts):
    text = SENTENCE.format(ref=_written(data, pmid, form))
    scrubber = StreamScrubber(evidence())
    shown, cursor = [], 0
    for cut in sorted(set(cuts)):
        shown.append(scrubber.feed(text[cursor:cut]))
        cursor = max(cursor, cut)
    shown.append(scrubber.feed(text[cursor:]))
    shown.append(scrubber.flush())
    assert pmid not in _fold("".join(shown))


@pytest.mark.parametrize(
    ("written", "kept"),
    [
        ("(PMID 35657320)", "[1]"),
        ("https://pubmed.ncbi.nlm.nih.gov/35657320/", "[1]"),
        ("[DYNAMIC](https://pubmed.ncbi.nlm.nih.gov/35657320/)", "DYNAMIC [1]"),
        ("doi.org/10.1056/NEJMoa2200075", "[1]"),
        ("PMID 3565 7320", "[1]"),
        ("PMID 35657\u200b320", "[1]"),
        ("europepmc.org/article/MED/35657320", "[1]"),
    ],
)
def test_verified_identifiers_in_any_spelling_become_our_own_marker(written, kept):
    answer = verify_answer(text=SENTENCE.format(ref=written), evidence=evidence())
    assert kept in answer.text
    assert "http" not in answer.text and "3565" not in answer.text
    assert answer.references[0]["pmid"] == "35657320"


@pytest.mark.parametrize(
    "text",
    [
        "Give 5 mg/kg/day; eGFR above 30 mL/min/1.73 m\u00b2 and HbA1c fell 0.5%/year.",
        "In 2019 the trial enrolled 1200 patients (95% CI 0.71-0.93).",
        "LDL-C fell by 1.0 mmol/L.",
    ],
)
def test_ordinary_clinical_text_is_left_alone(text):
    answer = verify_answer(text=text + " [1]", evidence=evidence())
    assert answer.text.startswith(text)
