"""Payload parsing: markers anywhere in model output (also fenced), schema validation, logged drops."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from research.payloads import (
    check_payload,
    normalize_phase,
    normalize_phases,
    normalize_status,
    parse_payloads,
    payload_preview_cut,
)
from research.registries import PAYLOAD_TYPES, payload_type_get
from trials.constants import PHASES, SEARCHABLE_STATUSES

TYPES = list(PAYLOAD_TYPES.values())
MARKERS = [payload_type.marker.rstrip(":") for payload_type in TYPES if payload_type.marker]
QUERY = {"query": '"Atrial Fibrillation"[MeSH] AND apixaban[tiab]', "explanation": "Finds apixaban studies in AF."}
TRIAL = {"condition": "melanoma", "phase": ["PHASE3"], "status": ["RECRUITING"], "explanation": "Recruiting phase 3."}
COLUMN = {"name": "RCT", "criteria": "Is this a randomized controlled trial?", "type": "boolean", "explanation": "x"}

# Prose that cannot contain a marker, a brace or a fence: what models write around payloads.
prose = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="{}`*"), max_size=200).filter(
    lambda text: not any(marker.lower() in text.lower() for marker in MARKERS)
)
layouts = st.sampled_from(
    [
        "{marker} {json}",
        "{marker}\n{json}",
        "```json\n{marker} {json}\n```",
        "```\n{marker}\n{json}\n```",
        "{marker}\n```json\n{json}\n```",
        "**{marker}** {json}",
    ]
)
suggestions = st.sampled_from(
    [
        ("pubmed_query_suggestion", QUERY),
        ("trial_search_suggestion", TRIAL),
        ("ai_column_suggestion", COLUMN),
    ]
)


def _decodes(text: str) -> bool:
    try:
        json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        return False
    return True


def _block(layout: str, name: str, data: dict) -> str:
    return layout.format(marker=payload_type_get(name).marker, json=json.dumps(data, indent=1))


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(before=prose, after=prose, layout=layouts, suggestion=suggestions)
def test_a_payload_anywhere_in_prose_is_found_and_removed(before, after, layout, suggestion) -> None:
    name, data = suggestion
    text = f"{before}\n{_block(layout, name, data)}\n{after}"

    parsed = parse_payloads(text, types=TYPES)

    assert [(payload.type, payload.data) for payload in parsed.payloads] == [(name, data)]
    assert parsed.dropped == []
    assert payload_type_get(name).marker.rstrip(":").lower() not in parsed.prose.lower()
    assert "```" not in parsed.prose
    assert "{" not in parsed.prose
    for part in (before.strip(), after.strip()):
        for line in part.splitlines():
            assert line.strip() in parsed.prose


@settings(max_examples=100, deadline=None)
@given(before=prose, after=prose, garbage=st.text(alphabet='{}[]":,abc 1', min_size=1, max_size=40))
def test_malformed_json_is_dropped_with_its_reason_and_the_marker_removed(before, after, garbage) -> None:
    broken = '{"query": "metformin", "explanation": ' + garbage
    assume(not _decodes(broken))  # the garbage may happen to complete an object
    text = f"{before}\nPUBMED_QUERY_SUGGESTION: {broken}\n\n{after}"

    parsed = parse_payloads(text, types=TYPES)

    assert parsed.payloads == []
    assert [dropped.type for dropped in parsed.dropped] == ["pubmed_query_suggestion"]
    assert parsed.dropped[0].reason.startswith("the JSON after the marker is not valid")
    assert "PUBMED_QUERY_SUGGESTION" not in parsed.prose
    for line in after.strip().splitlines():
        assert line.strip() in parsed.prose


@settings(max_examples=100, deadline=None)
@given(phase=st.text(min_size=1, max_size=12), before=prose)
def test_a_phase_outside_the_registry_enum_is_dropped(phase, before) -> None:
    assume(any(value not in PHASES for value in normalize_phases([phase])))
    data = {"condition": "asthma", "phase": [phase], "explanation": "x"}
    text = f"{before}\nTRIAL_SEARCH_SUGGESTION: {json.dumps(data)}"

    with capture_logs() as logs:
        parsed = parse_payloads(text, types=TYPES)

    assert parsed.payloads == []
    assert len(parsed.dropped) == 1
    assert re.match(r"phase\.\d+: ", parsed.dropped[0].reason)
    assert "is not one of ['EARLY_PHASE1', 'PHASE1', 'PHASE2', 'PHASE3', 'PHASE4', 'NA']" in parsed.dropped[0].reason
    assert [(log["event"], log["payload_type"]) for log in logs] == [("payload_dropped", "trial_search_suggestion")]


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Phase 3", "PHASE3"),
        ("phase III", "PHASE3"),
        ("PHASE_2", "PHASE2"),
        ("early phase 1", "EARLY_PHASE1"),
        ("Early Phase I", "EARLY_PHASE1"),
        ("N/A", "NA"),
        ("Phase 4", "PHASE4"),
        ("Phase 5", "Phase 5"),
        ("Phase IV", "PHASE4"),
        # Only phase 1 has an early form: an "early phase 2" trial is registered as phase 2.
        ("Early phase 2", "PHASE2"),
    ],
)
def test_phase_spellings_are_normalised(written: str, expected: str) -> None:
    assert normalize_phase(written) == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Recruiting", "RECRUITING"),
        ("active, not recruiting", "ACTIVE_NOT_RECRUITING"),
        ("not-yet-recruiting", "NOT_YET_RECRUITING"),
        ("Completed", "COMPLETED"),
        ("Enrolling by invitation", "Enrolling by invitation"),
    ],
)
def test_status_spellings_are_normalised_to_searchable_statuses(written: str, expected: str) -> None:
    assert normalize_status(written) == expected
    assert (expected in SEARCHABLE_STATUSES) is (expected != written)


def test_wrong_status_enum_is_dropped_and_the_right_one_kept() -> None:
    text = (
        'TRIAL_SEARCH_SUGGESTION: {"condition": "asthma", "status": ["ENROLLING_BY_INVITATION"], "explanation": "x"}\n'
        'TRIAL_SEARCH_SUGGESTION: {"condition": "asthma", "status": "Recruiting", "phase": "Phase 2/3", '
        '"explanation": "y"}'
    )

    parsed = parse_payloads(text, types=TYPES)

    assert [payload.data for payload in parsed.payloads] == [
        {"condition": "asthma", "status": ["RECRUITING"], "phase": ["PHASE2", "PHASE3"], "explanation": "y"}
    ]
    assert [dropped.reason for dropped in parsed.dropped] == [
        "status.0: 'ENROLLING_BY_INVITATION' is not one of ['RECRUITING', 'ACTIVE_NOT_RECRUITING', 'COMPLETED', "
        "'NOT_YET_RECRUITING', 'TERMINATED', 'WITHDRAWN', 'SUSPENDED']"
    ]
    assert parsed.prose == ""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("PUBMED_QUERY_SUGGESTION: no json here", "no JSON object follows the marker"),
        ('PUBMED_QUERY_SUGGESTION: ["metformin"]', "no JSON object follows the marker"),
        ('PUBMED_QUERY_SUGGESTION: {"query": "x"}', "'explanation' is a required property"),
        ('PUBMED_QUERY_SUGGESTION: {"query": "metformin", "explanation": "e", "db": "pmc"}', "Additional properties"),
        ('TRIAL_SEARCH_SUGGESTION: {"explanation": "e", "condition": ""}', "it sets none of the search fields"),
        ('AI_COLUMN_SUGGESTION: {"name": "RCT", "criteria": "RCT?", "type": "number", "explanation": "e"}', "type:"),
        ('AI_COLUMN_SUGGESTION: {"name": "", "criteria": "Is it?", "type": "text", "explanation": "e"}', "name:"),
    ],
)
def test_invalid_payloads_are_dropped_with_a_reason(text: str, reason: str) -> None:
    parsed = parse_payloads(f"Intro.\n{text}\nOutro.", types=TYPES)

    assert parsed.payloads == []
    assert len(parsed.dropped) == 1
    assert reason in parsed.dropped[0].reason
    assert parsed.prose.startswith("Intro.")
    assert parsed.prose.endswith("Outro.")
    assert "SUGGESTION" not in parsed.prose


def test_only_the_types_offered_are_parsed() -> None:
    text = f"See: AI_COLUMN_SUGGESTION: {json.dumps(COLUMN)}"

    parsed = parse_payloads(text, types=[payload_type_get("pubmed_query_suggestion")])

    assert parsed.payloads == []
    assert parsed.prose == text


def test_yes_no_column_type_is_read_as_boolean() -> None:
    data = check_payload(payload_type_get("ai_column_suggestion"), {**COLUMN, "type": "Yes/No", "name": " RCT "})

    assert data == {**COLUMN, "type": "boolean", "name": "RCT"}


def test_trial_details_payload_from_a_tool_validates_its_nct_id() -> None:
    payload_type = payload_type_get("trial_details")
    good = {
        "type": "trial_details",
        "nct_id": "NCT04280705",
        "url": "https://clinicaltrials.gov/study/NCT04280705",
        "brief_title": "ACTT",
    }

    assert check_payload(payload_type, good) == good
    with pytest.raises(ValueError, match="nct_id: 'NCT123' does not match"):
        check_payload(payload_type, {**good, "nct_id": "NCT123"})


@pytest.mark.parametrize(
    ("streamed", "shown"),
    [
        ("Here is a query.\nPUBMED_QUERY_SUGGESTION: {", "Here is a query.\n"),
        ("Here is a query. PUBMED_QU", "Here is a query. "),
        ("Here is a query. **AI_COL", "Here is a query. "),
        ("Here it is:\n```json\n{", "Here it is:\n"),
        ("Here it is: `", "Here it is: "),
        ("Publications in 2020 are Pivotal", "Publications in 2020 are Pivotal"),
        ("All rows are phase 3.", "All rows are phase 3."),
    ],
)
def test_streamed_preview_holds_back_payload_text(streamed: str, shown: str) -> None:
    assert streamed[: payload_preview_cut(streamed, types=TYPES)] == shown
