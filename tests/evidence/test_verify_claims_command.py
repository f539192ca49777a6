"""`manage.py verify_claims FILE --json`: the claim-verification contract an outside checker relies on."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evidence.management.commands.verify_claims import Command
from pubmed.models import Abstract
from tests.evidence.checker import (
    CORONAVIRUS,
    CORONAVIRUS_QUOTED,
    QUOTED,
    TRAMETINIB,
    UNKNOWN,
    stored_trametinib,  # noqa: F401  (fixture)
)
from tests.pubmed.conftest import (  # noqa: F401  (fixtures)
    FakeEutils,
    efetch_files,
    eutils_dir,
    fake_eutils,
    recorded_articles,
)

pytestmark = pytest.mark.django_db

ASPIRIN = "Daily low-dose aspirin did not reduce the risk of cardiovascular events in older adults."
KEYS = ["id", "verdict", "supported", "score", "quotes", "reason"]


def jsonl(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "claims.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def run(path: str, *args: str) -> list[dict]:
    out = io.StringIO()
    call_command("verify_claims", path, "--json", *args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_one_line_out_per_line_in_in_order_with_every_field(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {"id": "a", "claim": ASPIRIN, "passages": [{"id": "p1", "text": f"Background. {ASPIRIN} Bleeding rose."}]},
        "",
        {"id": 7, "claim": "Metformin prevents migraine in teenagers.", "passages": [{"id": "p2", "text": ASPIRIN}]},
        "   ",
        {"id": None, "claim": ASPIRIN, "passages": []},
    )
    results = run(str(path))
    assert [list(result) for result in results] == [KEYS] * 3
    assert [result["id"] for result in results] == ["a", 7, None]
    assert results[0]["verdict"] == "supported" and results[0]["supported"] is True
    assert results[0]["quotes"] == [{"passage": "p1", "text": ASPIRIN}]
    assert [r["verdict"] for r in results[1:]] == ["not_enough_info", "not_enough_info"]
    assert [r["supported"] for r in results[1:]] == [False, False]
    assert results[2]["reason"] == "the statement cites no source"
    assert all(isinstance(result["score"], float) for result in results)


def test_pmids_are_resolved_like_the_citation_checker_does(
    tmp_path: Path,
    stored_trametinib: Abstract,  # noqa: F811
    fake_eutils: FakeEutils,  # noqa: F811
) -> None:
    fake_eutils.serve()
    path = jsonl(
        tmp_path,
        {"id": 1, "claim": QUOTED, "pmids": [TRAMETINIB]},
        {"id": 2, "claim": CORONAVIRUS_QUOTED, "pmids": [CORONAVIRUS, TRAMETINIB]},
        {"id": 3, "claim": QUOTED, "pmids": [UNKNOWN]},
    )
    first, second, third = run(str(path))
    assert (first["verdict"], first["quotes"]) == ("supported", [{"passage": TRAMETINIB, "text": QUOTED}])
    assert (second["verdict"], second["quotes"][0]["passage"]) == ("supported", CORONAVIRUS)
    assert (third["verdict"], third["supported"]) == ("not_enough_info", False)
    assert third["reason"] == f"PMID {UNKNOWN} is not found in PubMed or the library; the statement cites no source"
    # One efetch for every missing PMID of the file; the fetched abstract is stored for next time.
    assert [seen.params["id"] for seen in fake_eutils.requests("/efetch.fcgi")] == [f"{CORONAVIRUS},{UNKNOWN}"]
    assert Abstract.objects.filter(pmid=CORONAVIRUS).exists()


def test_dash_reads_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    line = {"id": "s", "claim": ASPIRIN, "passages": [{"id": "p", "text": ASPIRIN}]}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(line) + "\n"))
    assert [result["id"] for result in run("-")] == ["s"]


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "line 3: not valid JSON (Expecting property name enclosed in double quotes at column 2)."),
        ('["a list"]', 'line 3: each line must be a JSON object {"id", "claim", "passages" or "pmids"}.'),
        ({"id": 1, "passages": []}, 'line 3: "claim" is missing or not a non-empty string.'),
        ({"id": 1, "claim": "  ", "passages": []}, 'line 3: "claim" is missing or not a non-empty string.'),
        ({"id": 1, "claim": "x"}, 'line 3: give "passages" ([{"id", "text"}]) or "pmids" (["35657320", ...]).'),
        (
            {"id": 1, "claim": "x", "passages": "text"},
            'line 3: "passages" must be a list of {"id": str, "text": str} objects.',
        ),
        (
            {"id": 1, "claim": "x", "passages": [{"id": "p"}]},
            'line 3: passages[0] must be an object {"id": str, "text": str}.',
        ),
        (
            {"id": 1, "claim": "x", "pmids": ["PMC123", 0]},
            "line 3: not PMIDs: 'PMC123', 0; a PMID is digits only, e.g. 35657320.",
        ),
    ],
)
def test_a_malformed_line_names_its_number_and_judges_nothing(tmp_path: Path, bad_line: object, message: str) -> None:
    good = {"id": 1, "claim": ASPIRIN, "passages": [{"id": "p", "text": ASPIRIN}]}
    path = jsonl(tmp_path, good, "", bad_line, good)
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("verify_claims", str(path), "--json", stdout=out)
    assert (str(refused.value), refused.value.returncode) == (message, 2)
    assert out.getvalue() == ""


def test_from_the_command_line_a_malformed_line_exits_2_with_the_message_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path, {"id": 1, "claim": ASPIRIN, "passages": [{"id": "p", "text": ASPIRIN}]}, "{oops")
    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "verify_claims", str(path), "--json"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "line 2: not valid JSON" in captured.err


def test_without_json_a_readable_table(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "claim": ASPIRIN, "passages": [{"id": "p1", "text": ASPIRIN}]})
    out = io.StringIO()
    call_command("verify_claims", str(path), stdout=out)
    (row,) = out.getvalue().splitlines()
    assert row.split()[:4] == ["1", "a", "supported", "1.00"]
    assert f'"{ASPIRIN}" (p1)' in row


def test_help_says_blank_lines_are_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        Command().run_from_argv(["manage.py", "verify_claims", "--help"])
    assert "Blank lines are skipped." in capsys.readouterr().out


def test_a_missing_verifier_model_stops_the_command_with_how_to_rebuild_it(tmp_path: Path) -> None:
    """Start-up refuses a missing model (no fall-back to rules): one line naming the rebuild command, exit 3."""
    path = jsonl(tmp_path, {"id": 1, "claim": ASPIRIN, "passages": [{"id": "p", "text": ASPIRIN}]})
    empty = tmp_path / "no-model"
    empty.mkdir()
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "manage.py", "verify_claims", str(path), "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "VERIFIER_MODEL": str(empty)},
    )
    assert result.returncode == 3, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"MedCite is misconfigured: claim verifier model at {empty} lacks model.onnx, tokenizer.json, verifier.json; "
        'rebuild it with `make verifier` (README "Rebuilding the claim verifier") or point VERIFIER_MODEL at one'
    )
