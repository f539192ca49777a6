"""Tags are shown by their display names on pages: curated labels, else a readable form of the code."""

from __future__ import annotations

import lxml.html
import pytest

from evidence.models import Study
from evidence.tag_names import humanize_tag, tag_labels
from tests.conftest import seed_library


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("post_surgical_mrd", "Post-surgical MRD"),
        ("risk_stratification", "Risk stratification"),
        ("de-escalation", "De-escalation"),
        ("sglt2_inhibitors", "SGLT2 inhibitors"),
        ("ctdna", "ctDNA"),
        ("ckd", "CKD"),
    ],
)
def test_codes_without_a_curated_label_are_humanized(code: str, name: str) -> None:
    assert humanize_tag(code) == name


@pytest.mark.django_db
def test_curated_labels_win(library_seeded) -> None:
    assert tag_labels(["af", "post_surgical_mrd"]) == {
        "af": "Atrial fibrillation",
        "post_surgical_mrd": "Post-surgical MRD",
    }


@pytest.fixture
def library_seeded(db) -> None:
    seed_library()


@pytest.mark.django_db
def test_library_and_study_pages_never_show_raw_tag_codes(client, library_seeded) -> None:
    study = Study.objects.filter(clinical_settings__contains=["post_surgical_mrd"]).first()
    assert study is not None
    codes = {*study.disease_tags, *study.decision_tags, *study.clinical_settings}
    codes_with_separators = {code for code in codes if "_" in code}
    assert codes_with_separators
    detail = lxml.html.fromstring(client.get(f"/library/{study.pk}/").content.decode())
    text = detail.cssselect("main")[0].text_content()
    assert "Post-surgical MRD" in text
    assert not [code for code in codes_with_separators if code in text]
    listing = lxml.html.fromstring(client.get("/library/").content.decode())
    options = listing.cssselect("select[name=tag] option")
    shown = [option.text_content() for option in options[1:]]
    assert shown and not [name for name in shown if "_" in name]
    assert [option.get("value") for option in options[1:]] != shown  # values stay codes, text is names
    assert shown == sorted(shown, key=str.lower)
