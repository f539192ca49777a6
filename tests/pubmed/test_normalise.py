"""The disease normaliser: verify `drug AND disease` on PubMed, broaden once along the MeSH tree, blocklist, cache."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from werkzeug import Request, Response

from pubmed.clients import EutilsUnavailable, eutils_client
from pubmed.mesh_tree import mesh_tree
from pubmed.models import ScoutCacheEntry, ScoutCacheKind
from pubmed.services.normalise import (
    MIN_RESULTS,
    clean_disease_name,
    drug_disease_query,
    is_generic,
    mesh_broader,
    normalise_disease,
)
from tests.conftest import seed_vocabulary
from tests.pubmed.conftest import FakeEutils, esearch_json

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _shorthand(db) -> None:
    """The curated abbreviations, which spell out a disease name written as shorthand ("HCC")."""
    seed_vocabulary()


def serve_counts(fake: FakeEutils, counts: dict[str, int]) -> None:
    """Answer esearch with the count of the first disease named in `counts` that the query contains."""

    def handler(request: Request) -> Response:
        params = fake.record(request)
        term = params.get("term", "").lower()
        count = next((n for disease, n in counts.items() if f'"{disease.lower()}"[' in term), 0)
        return Response(esearch_json(pmids=[], count=count), content_type="application/json")

    fake.server.expect_request("/esearch.fcgi").respond_with_handler(handler)


def terms_counted(fake: FakeEutils) -> list[str]:
    return [re.findall(r'"([^"]+)"\[MeSH Terms\]', s.params["term"])[-1] for s in fake.requests("/esearch.fcgi")]


def test_the_count_is_for_drug_and_disease_together(fake_eutils: FakeEutils) -> None:
    serve_counts(fake_eutils, {"non-small cell lung cancer": 812})
    result = normalise_disease(drug="gefitinib", disease=" NSCLC ", client=eutils_client())
    assert (result.normalised, result.count, result.broadened, result.source) == (
        "non-small cell lung cancer", 812, False, "rules")
    (request,) = fake_eutils.requests("/esearch.fcgi")
    assert request.params["term"] == drug_disease_query("gefitinib", "non-small cell lung cancer")
    assert request.params["term"].startswith('("gefitinib"[Title/Abstract] OR "gefitinib"[MeSH Terms]) AND ')
    assert request.params["retmax"] == "0"


def test_a_rare_qualified_name_broadens_to_its_mesh_descriptor(fake_eutils: FakeEutils) -> None:
    assert mesh_broader("refractory amelanotic melanoma") == ["Melanoma, Amelanotic"]
    serve_counts(fake_eutils, {"metastatic melanoma": 1, "Melanoma": 57})
    result = normalise_disease(drug="trametinib", disease="Metastatic melanoma", client=eutils_client())
    assert (result.normalised, result.count, result.broadened, result.broadening) == ("Melanoma", 57, True, "mesh")
    assert [t["term"] for t in result.tried] == ["metastatic melanoma", "Melanoma"]


def test_a_descriptor_with_too_few_hits_broadens_one_level_up_the_tree(fake_eutils: FakeEutils) -> None:
    assert mesh_tree().parents("Melanoma, Amelanotic") == ["Melanoma"]
    serve_counts(fake_eutils, {"melanoma amelanotic": 2, "Melanoma": 40})
    result = normalise_disease(drug="trametinib", disease="melanoma, amelanotic", client=eutils_client())
    assert (result.normalised, result.count, result.broadened, result.broadening) == ("Melanoma", 40, True, "mesh")
    assert result.tried == [
        {"term": "melanoma amelanotic", "count": 2, "verdict": "too few"},
        {"term": "Melanoma", "count": 40, "verdict": "accepted"},
    ]


def test_a_broader_term_with_too_few_hits_is_not_accepted(fake_eutils: FakeEutils) -> None:
    serve_counts(fake_eutils, {"melanoma amelanotic": 0, "Melanoma": MIN_RESULTS - 1})
    result = normalise_disease(drug="obscurinib", disease="melanoma, amelanotic", client=eutils_client())
    assert (result.normalised, result.count, result.broadened) == ("melanoma amelanotic", 0, False)
    assert result.tried[-1] == {"term": "Melanoma", "count": MIN_RESULTS - 1, "verdict": "too few"}


def test_an_over_generic_broader_term_is_refused_without_asking_pubmed(fake_eutils: FakeEutils) -> None:
    # Neoplasms by Histologic Type sits above Neoplasms, Germ Cell and Embryonal: both are blocklisted.
    assert mesh_tree().parents("Neoplasms, Germ Cell and Embryonal") == ["Neoplasms by Histologic Type"]
    assert is_generic("Neoplasms by Histologic Type") and is_generic("Neoplasms") and is_generic("cancer")
    serve_counts(fake_eutils, {"neoplasms germ cell and embryonal": 1, "neoplasms by histologic type": 900})
    result = normalise_disease(drug="cisplatin", disease="Neoplasms, Germ Cell and Embryonal", client=eutils_client())
    assert (result.normalised, result.broadened) == ("neoplasms germ cell and embryonal", False)
    assert result.tried[-1] == {"term": "Neoplasms by Histologic Type", "count": None, "verdict": "too generic"}
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1


def test_without_the_mesh_tree_nothing_is_broadened(fake_eutils: FakeEutils, settings: object,
                                                   tmp_path: Path) -> None:
    settings.MESH_TREE_PATH = tmp_path / "absent.txt"  # type: ignore[attr-defined]
    serve_counts(fake_eutils, {"melanoma amelanotic": 1})
    result = normalise_disease(drug="trametinib", disease="melanoma, amelanotic", client=eutils_client())
    assert (result.normalised, result.count, result.broadened, result.broadening) == (
        "melanoma amelanotic", 1, False, "")
    assert mesh_broader("melanoma, amelanotic") == []


def test_normalisations_and_counts_are_cached_in_the_database_until_they_expire(fake_eutils: FakeEutils) -> None:
    serve_counts(fake_eutils, {"hepatocellular carcinoma": 120})
    first = normalise_disease(drug="sorafenib", disease="HCC", client=eutils_client())
    again = normalise_disease(drug="Sorafenib", disease="hcc", client=eutils_client())
    assert (first.cached, again.cached, again.normalised, again.count) == (False, True, "hepatocellular carcinoma", 120)
    assert len(fake_eutils.requests("/esearch.fcgi")) == 1
    kinds = set(ScoutCacheEntry.objects.values_list("kind", flat=True))
    assert kinds == {ScoutCacheKind.COUNT, ScoutCacheKind.NORMALISATION}
    entry = ScoutCacheEntry.objects.get(kind=ScoutCacheKind.NORMALISATION)
    assert timedelta(days=4, hours=23) < entry.expires_at - entry.created_at <= timedelta(days=5)
    ScoutCacheEntry.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    expired = normalise_disease(drug="sorafenib", disease="HCC", client=eutils_client())
    assert expired.cached is False
    assert len(fake_eutils.requests("/esearch.fcgi")) == 2


def test_unreachable_ncbi_stops_the_normalisation_and_caches_nothing(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "down", status=503, content_type="text/plain")
    with pytest.raises(EutilsUnavailable) as caught:
        normalise_disease(drug="sorafenib", disease="HCC", client=eutils_client())
    assert str(caught.value).startswith("NCBI E-utilities esearch.fcgi failed after ")
    assert not ScoutCacheEntry.objects.exists()


def test_a_refused_count_leaves_the_name_unverified_and_uncached(fake_eutils: FakeEutils) -> None:
    fake_eutils.respond("/esearch.fcgi", "bad request", status=400, content_type="text/plain")
    result = normalise_disease(drug="sorafenib", disease="HCC", client=eutils_client())
    assert (result.normalised, result.count) == ("hepatocellular carcinoma", None)
    assert not ScoutCacheEntry.objects.exists()


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Crohn's Disease", "crohn disease"),
        ("T2DM", "type 2 diabetes mellitus"),
        ("  lung   cancer. ", "lung cancer"),
        ("NSCLC", "non-small cell lung cancer"),
        ("MM", "multiple myeloma"),
        ("Covid-19", "covid-19"),
        ("covid", "covid-19"),
    ],
)
def test_clean_disease_name(raw: str, clean: str) -> None:
    assert clean_disease_name(raw) == clean


def test_a_curators_abbreviation_spells_out_a_disease_name_from_the_next_run() -> None:
    from evidence.models import Abbreviation

    assert clean_disease_name("XLH") == "xlh"
    Abbreviation.objects.create(term="XLH", expansions=["X-linked hypophosphatemia"], case_sensitive=True)
    assert clean_disease_name("XLH") == "x-linked hypophosphatemia"
