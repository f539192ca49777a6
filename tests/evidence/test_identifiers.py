import re

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from evidence import identifiers

KNOWN_PMIDS = ["35657320", "40055522", "36646802", "37055640", "9997", "1"]
KNOWN_DOIS = [
    "10.1056/NEJMoa2200075",
    "10.1038/s41591-025-03579-w",
    "10.1016/j.annonc.2022.11.005",
    "10.1161/CIR.0000000000001193",
    "10.14309/ajg.0000000000001627",
    "10.1002/jso.27989",
]
KNOWN_NCTS = ["NCT03057951", "NCT03619213", "NCT01938248", "NCT04660344"]


@pytest.mark.parametrize("pmid", KNOWN_PMIDS)
def test_known_pmids_pass(pmid):
    assert identifiers.is_pmid(pmid)
    identifiers.validate_pmid(pmid)


@pytest.mark.parametrize("doi", KNOWN_DOIS)
def test_known_dois_pass(doi):
    assert identifiers.is_doi(doi)
    identifiers.validate_doi(doi)


@pytest.mark.parametrize("nct", KNOWN_NCTS)
def test_known_ncts_pass(nct):
    assert identifiers.is_nct(nct)
    identifiers.validate_nct(nct)


@pytest.mark.parametrize(
    ("validator", "value", "message"),
    [
        (identifiers.validate_pmid, "PMID:35657320", "'PMID:35657320' is not a PMID"),
        (identifiers.validate_pmid, "0123", "'0123' is not a PMID"),
        (identifiers.validate_pmid, "3565732a", "'3565732a' is not a PMID"),
        (identifiers.validate_doi, "https://doi.org/10.1056/x", "is not a DOI"),
        (identifiers.validate_doi, "10.12/abc", "'10.12/abc' is not a DOI"),
        (identifiers.validate_doi, "10.1056/ has space", "is not a DOI"),
        (identifiers.validate_nct, "NCT1234567", "'NCT1234567' is not an NCT number"),
        (identifiers.validate_nct, "nct12345678", "'nct12345678' is not an NCT number"),
    ],
)
def test_malformed_identifiers_are_rejected_with_a_teaching_message(validator, value, message):
    with pytest.raises(ValidationError) as excinfo:
        validator(value)
    assert message in excinfo.value.messages[0]


@given(st.text(max_size=15))
def test_every_string_that_passes_as_pmid_is_digits_without_leading_zero(value):
    if identifiers.is_pmid(value):
        assert value.isascii() and value.isdigit()
        assert not value.startswith("0")
        assert 1 <= len(value) <= 9


@given(st.text(max_size=40))
def test_every_string_that_passes_as_doi_is_well_formed(value):
    if identifiers.is_doi(value):
        prefix, _, suffix = value.partition("/")
        assert prefix.startswith("10.")
        assert re.fullmatch(r"10\.\d{4,9}(\.\d+)*", prefix)
        assert suffix and not any(ch.isspace() for ch in suffix)


@given(st.from_regex(r"10\.[0-9]{4,9}/[A-Za-z0-9._;()/:-]{1,30}", fullmatch=True))
def test_generated_well_formed_dois_pass(value):
    assert identifiers.is_doi(value)


@given(st.text(max_size=14))
def test_every_string_that_passes_as_nct_is_nct_plus_eight_digits(value):
    if identifiers.is_nct(value):
        assert value[:3] == "NCT"
        assert len(value) == 11
        assert value[3:].isascii() and value[3:].isdigit()


@given(st.integers(min_value=1, max_value=999_999_999))
def test_every_positive_integer_is_a_pmid(number):
    assert identifiers.is_pmid(str(number))


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("https://doi.org/10.1056/NEJMoa2200075", "10.1056/NEJMoa2200075"),
        ("doi: 10.1056/NEJMoa2200075.", "10.1056/NEJMoa2200075"),
        (" 10.1038/s41591-025-03579-w ", "10.1038/s41591-025-03579-w"),
    ],
)
def test_normalize_doi_strips_prefixes_but_keeps_case(raw, normalised):
    assert identifiers.normalize_doi(raw) == normalised
    assert identifiers.doi_key(raw) == normalised.lower()
