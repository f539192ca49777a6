import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence import identifiers
from evidence.models import EvidenceStrength, Finding, GuidanceItem, Study, Tag, TagKind
from evidence.services.seed import SEED_PATH, SeedError, evidence_seed

pytestmark = pytest.mark.django_db

SEED = json.loads(SEED_PATH.read_text(encoding="utf-8"))
# PMIDs our early planning notes gave for CIRCULATE-Japan, DYNAMIC, TRACERx and c-TRAK TN: all wrong.
WRONG_PLANNING_PMIDS = ("36623937", "36757538", "37059876", "36088592")
ANCHOR_SCENARIOS = {
    "af_ckd_anticoagulation",
    "cap_sepsis_antibiotics",
    "dapt_hbr",
    "hfpef_ckd",
    "ahre_anticoagulation",
    "gi_bleed_anticoagulation_restart",
}
DECISION_TAGS = {
    "anticoagulation",
    "antiplatelet",
    "drug_choice",
    "duration",
    "de-escalation",
    "monitoring",
    "dose",
    "therapy",
    "adjuvant",
    "surveillance",
    "restart",
    "risk_stratification",
    "diagnosis",
}
HISTORY_MODELS = (Study.history.model, GuidanceItem.history.model, Finding.history.model)


def _shared_entries(shared_data: Path) -> dict[str, dict[str, Any]]:
    entries = json.loads((shared_data / "landmark_studies.json").read_text(encoding="utf-8"))
    return {entry["study_name"]: entry for entry in entries}


def _word_runs(text: str, length: int = 12) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + length]) for i in range(len(words) - length + 1)}


def _write_seed(tmp_path: Path, content: dict[str, Any]) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    return path


def _seed_copy() -> dict[str, Any]:
    return json.loads(json.dumps(SEED))


def _history_rows() -> int:
    return sum(model.objects.count() for model in HISTORY_MODELS)


def test_seed_loads_every_study_and_guidance_item_with_their_links():
    result = evidence_seed()

    assert (result.studies.created, result.studies.updated, result.studies.unchanged) == (28, 0, 0)
    assert (result.guidance_items.created, result.guidance_items.updated) == (9, 0)
    assert Study.objects.count() == 28
    assert GuidanceItem.objects.count() == 9
    linked = dict(Study.objects.values_list("study_name", "guidance_item__title"))
    assert linked == {row["study_name"]: row["guidance_item"] for row in SEED["studies"]}
    assert set(GuidanceItem.objects.filter(studies__isnull=True).values_list("title", flat=True)) == set()


def test_second_run_creates_updates_and_records_nothing():
    evidence_seed()
    history_before = _history_rows()
    stamps_before = dict(Study.objects.values_list("study_name", "updated_at"))

    result = evidence_seed()

    findings = Finding.objects.count()
    assert (result.created, result.updated, result.unchanged) == (0, 0, 37 + findings)
    assert (result.studies.unchanged, result.guidance_items.unchanged, result.findings.unchanged) == (28, 9, findings)
    assert Study.objects.count() == 28
    assert GuidanceItem.objects.count() == 9
    assert _history_rows() == history_before == 37 + findings
    assert dict(Study.objects.values_list("study_name", "updated_at")) == stamps_before


def test_every_seeded_identifier_equals_the_verified_shared_value(shared_data):
    verified = _shared_entries(shared_data)
    evidence_seed()

    assert set(Study.objects.values_list("study_name", flat=True)) == set(verified)
    for study in Study.objects.all():
        entry = verified[study.study_name]
        seeded = (study.pmid, study.doi, study.nct_number, study.pmcid)
        expected = tuple(entry[key] or "" for key in ("pmid", "doi", "nct_number", "pmcid"))
        assert seeded == expected, study.study_name


def test_wrong_planning_pmids_appear_nowhere_in_the_seed():
    text = SEED_PATH.read_text(encoding="utf-8")
    evidence_seed()

    assert [pmid for pmid in WRONG_PLANNING_PMIDS if pmid in text] == []
    assert not Study.objects.filter(pmid__in=WRONG_PLANNING_PMIDS).exists()
    corrected = Study.objects.filter(study_name__in=["DYNAMIC", "c-TRAK TN"])
    assert dict(corrected.values_list("study_name", "pmid")) == {
        "DYNAMIC": "35657320",
        "c-TRAK TN": "36423745",
    }


def test_every_study_has_an_identifier_and_key_findings_in_our_own_words(shared_data):
    verified = _shared_entries(shared_data)
    evidence_seed()

    for study in Study.objects.all():
        entry = verified[study.study_name]
        assert any((study.pmid, study.doi, study.nct_number)), study.study_name
        assert study.key_finding.strip() != entry["key_finding"].strip(), study.study_name
        assert _word_runs(study.key_finding) & _word_runs(entry["key_finding"]) == set(), study.study_name
        assert _word_runs(study.study_design) & _word_runs(entry["study_design"]) == set(), study.study_name


def test_every_url_is_the_direct_link_for_the_studys_own_identifier():
    evidence_seed()

    for study in Study.objects.all():
        expected = study.pubmed_url or study.doi_url or study.ctgov_url
        assert study.url == expected, study.study_name
        assert re.match(r"^https://(pubmed\.ncbi\.nlm\.nih\.gov|doi\.org|clinicaltrials\.gov)/", study.url)
    assert Study.objects.get(study_name="DYNAMIC").url == identifiers.pubmed_url("35657320")


def test_tags_are_normalised_and_anchor_scenarios_are_canonical():
    evidence_seed()
    studies = list(Study.objects.all())
    tags = {tag for study in studies for tag in study.disease_tags}

    assert [tag for tag in tags if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", tag)] == []
    assert {
        "af",
        "ckd",
        "heart_failure",
        "hfpef",
        "hfmref",
        "acs",
        "pci",
        "dapt",
        "high_bleeding_risk",
        "cap",
        "pneumonia",
        "sepsis",
        "gi_bleed",
        "ahre",
        "ctdna",
        "mrd",
    } <= tags
    assert {tag for study in studies for tag in study.decision_tags} <= DECISION_TAGS
    assert {scenario for study in studies for scenario in study.anchor_scenarios} == ANCHOR_SCENARIOS
    for item in GuidanceItem.objects.all():
        assert set(item.decision_tags) <= DECISION_TAGS, item.title


def test_every_seeded_tag_is_a_curated_tag_of_its_kind():
    # A study's disease tags that are not curated diseases became diseases of their own at question time: the CAP
    # guideline's "antibiotics" made "abx" a condition to cover, and "anticoagulation" (a decision) a disease.
    call_command("seed_evidence", stdout=StringIO())
    kinds = dict(Tag.objects.values_list("code", "kind"))
    rows = [*Study.objects.all(), *GuidanceItem.objects.all()]
    misfiled = [
        (str(row), tag, kind)
        for row in rows
        for tags, kind in ((row.disease_tags, TagKind.DISEASE), (row.decision_tags, TagKind.DECISION))
        for tag in tags
        if kinds.get(tag) != kind
    ]
    assert misfiled == []


@pytest.mark.parametrize(
    ("study_name", "strength", "context", "test_names"),
    [
        ("IMvigor011", EvidenceStrength.HIGH, "positive", ["Signatera"]),
        ("DYNAMIC", EvidenceStrength.MODERATE, "negative", ["Safe-SeqS"]),
        ("COSMOS (Guardant Reveal tissue-free MRD)", EvidenceStrength.MODERATE, "monitoring", ["Guardant Reveal"]),
        ("CIRCULATE-Japan platform protocol (GALAXY, VEGA, ALTAIR)", EvidenceStrength.LOW, "both", ["Signatera"]),
        ("2024 ESC/EACTS Atrial Fibrillation Guidelines", EvidenceStrength.HIGH, "both", []),
    ],
)
def test_strength_labels_are_stored_as_ordered_values(study_name, strength, context, test_names):
    evidence_seed()

    study = Study.objects.get(study_name=study_name)
    seeded = (study.evidence_strength, study.result_context, study.test_names)
    assert seeded == (strength, context, test_names)


def test_broken_row_is_named_and_nothing_is_written(tmp_path):
    content = _seed_copy()
    content["studies"][4]["pmid"] = "3393191x"
    path = _write_seed(tmp_path, content)

    with pytest.raises(SeedError) as excinfo:
        evidence_seed(path=path)

    assert str(excinfo.value) == (
        f"{path} is not a valid seed file; nothing was written:\n"
        "studies row 5 ('CIRCULATE-Japan platform protocol (GALAXY, VEGA, ALTAIR)'): "
        "pmid: '3393191x' is not a PMID: use the digits only, e.g. 35657320 "
        "(no 'PMID:' prefix, no leading zeros)."
    )
    assert (Study.objects.count(), GuidanceItem.objects.count(), _history_rows()) == (0, 0, 0)


def test_broken_file_leaves_an_already_seeded_library_untouched(tmp_path):
    evidence_seed()
    content = _seed_copy()
    content["studies"][0]["key_finding"] = "A rewritten finding that must not be saved."
    content["studies"][1]["doi"] = content["studies"][0]["doi"]
    path = _write_seed(tmp_path, content)

    with pytest.raises(SeedError) as excinfo:
        evidence_seed(path=path)

    assert str(excinfo.value).endswith(
        "studies row 2 ('DYNAMIC 5-year outcomes'): doi 10.1056/nejmoa2200075 is already used by "
        "studies row 1 ('DYNAMIC')."
    )

    assert Study.objects.get(study_name="DYNAMIC").key_finding == SEED["studies"][0]["key_finding"]
    assert _history_rows() == 37 + Finding.objects.count()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    row=st.integers(min_value=0, max_value=len(SEED["studies"]) - 1),
    pmid=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=14)
    .map(str.strip)
    .filter(lambda value: value and not identifiers.is_pmid(value.removeprefix("PMID:").strip())),
)
def test_any_malformed_pmid_is_reported_for_its_row_and_nothing_is_written(tmp_path, row, pmid):
    content = _seed_copy()
    content["studies"][row]["pmid"] = pmid
    path = _write_seed(tmp_path, content)

    with pytest.raises(SeedError) as excinfo:
        evidence_seed(path=path)

    name = content["studies"][row]["study_name"]
    problems = str(excinfo.value).splitlines()[1:]
    assert [line.split(": pmid")[0] for line in problems] == [f"studies row {row + 1} ({name!r})"]
    assert (Study.objects.count(), GuidanceItem.objects.count(), _history_rows()) == (0, 0, 0)


def test_changed_row_updates_one_study_and_adds_one_history_row(tmp_path):
    evidence_seed()
    content = _seed_copy()
    content["studies"][0]["study_name"] = "DYNAMIC (stage II colon)"
    content["studies"][0]["sample_size"] = 456
    path = _write_seed(tmp_path, content)

    result = evidence_seed(path=path)

    assert (result.studies.created, result.studies.updated, result.studies.unchanged) == (0, 1, 27)
    study = Study.objects.get(pmid="35657320")
    assert (study.study_name, study.sample_size) == ("DYNAMIC (stage II colon)", 456)
    assert Study.objects.count() == 28
    assert study.history.count() == 2


def test_curator_edits_are_kept_unless_overwriting_is_requested():
    evidence_seed()
    study = Study.objects.get(study_name="DELIVER")
    study.key_finding = "Curator's reworded finding."
    study.save()

    kept = evidence_seed()
    assert (kept.studies.kept_curator_edits, kept.studies.updated) == (1, 0)
    assert Study.objects.get(study_name="DELIVER").key_finding == "Curator's reworded finding."

    reset = evidence_seed(overwrite_curator_edits=True)
    assert (reset.studies.kept_curator_edits, reset.studies.updated) == (0, 1)
    expected = next(row["key_finding"] for row in SEED["studies"] if row["study_name"] == "DELIVER")
    assert Study.objects.get(study_name="DELIVER").key_finding == expected


def test_command_prints_counts():
    first, second = StringIO(), StringIO()

    call_command("seed_evidence", stdout=first)
    call_command("seed_evidence", stdout=second)

    assert first.getvalue() == (
        "Guidance items: 9 created, 0 updated, 0 unchanged.\nStudies: 28 created, 0 updated, 0 unchanged.\n"
        f"Curated findings: {Finding.objects.count()} created, 0 updated, 0 unchanged (new and changed findings await "
        "a curator's review).\n"
        "Vocabulary tags: 56 created, 0 updated, 0 unchanged, 0 kept.\n"
        "Anchor scenarios: 6 created, 0 updated, 0 unchanged, 0 kept.\n"
        "Classification rules: 13 created, 0 updated, 0 unchanged, 0 kept.\n"
        "Abbreviations and lay terms: 399 created, 0 updated, 0 unchanged, 0 kept.\n"
        "Drug classes: 16 created, 0 updated, 0 unchanged, 0 kept.\n"
        "Curated words (word classes): 794 created, 0 updated, 0 unchanged, 0 kept.\n"
        "Decision aids: 6 created, 0 updated, 0 unchanged.\n"
    )
    assert second.getvalue() == (
        "Guidance items: 0 created, 0 updated, 9 unchanged.\nStudies: 0 created, 0 updated, 28 unchanged.\n"
        f"Curated findings: 0 created, 0 updated, {Finding.objects.count()} unchanged (new and changed findings await "
        "a curator's review).\n"
        "Vocabulary tags: 0 created, 0 updated, 56 unchanged, 0 kept.\n"
        "Anchor scenarios: 0 created, 0 updated, 6 unchanged, 0 kept.\n"
        "Classification rules: 0 created, 0 updated, 13 unchanged, 0 kept.\n"
        "Abbreviations and lay terms: 0 created, 0 updated, 399 unchanged, 0 kept.\n"
        "Drug classes: 0 created, 0 updated, 16 unchanged, 0 kept.\n"
        "Curated words (word classes): 0 created, 0 updated, 794 unchanged, 0 kept.\n"
        "Decision aids: 0 created, 0 updated, 6 unchanged.\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "Expecting property name enclosed in double quotes at line 1, column 2."),
        ('{"studies": []}', 'must be a JSON object with exactly the keys "guidance_items" and "studies".'),
        (
            '{"guidance_items": [], "studies": [{"study_name": "X", "title": "T", "key_finding": "K", '
            '"pmid": "1", "seed_pmid_verdict": "wrong"}]}',
            "studies row 1 ('X'): unknown field(s) seed_pmid_verdict.",
        ),
        (
            '{"guidance_items": [], "studies": [{"study_name": "X", "title": "T", "key_finding": "K", '
            '"aliases": "A", "pmid": 35657320}]}',
            "studies row 1 ('X'): aliases must be a list of strings, not 'A'; pmid must be a string, not 35657320.",
        ),
        (
            '{"guidance_items": [], "studies": [{"study_name": "X", "title": "T", "key_finding": "K", '
            '"pmid": "1", "evidence_strength": "very high", "guidance_item": "G"}]}',
            "studies row 1 ('X'): evidence_strength 'very high' must be one of low, moderate, high.",
        ),
    ],
)
def test_command_rejects_an_invalid_file_with_a_clear_message(tmp_path, text, message):
    path = tmp_path / "seed.json"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(CommandError) as excinfo:
        call_command("seed_evidence", path=path)

    assert message in str(excinfo.value)
    assert str(path) in str(excinfo.value)
    assert Study.objects.count() == 0
