"""Follow one chat question through the code as it runs: which product files it passes, and how often it comes back.

A question typed on the chat page is POSTed to `chat/views.py`, answered and stored. While that request runs, every
call of a product function (`config`, `evidence`, `pubmed`, `trials`, `chat`, `research`) is watched; a call is on
the question's path when one of its arguments is the question - its text, its text with the shorthand spelled out
(in place, or appended), or an object that carries it as `question` (the answer run) - other than `self` (the run's
own bookkeeping, `record` and `trace`, is not a step the question passes), and a generator resumed to stream the next
event is not a new call. The path is the sequence of files those calls are made in, a file written once for
consecutive calls in it. The script prints:

- the path, file by file, with the functions entered there;
- distinct files: how many files the question passes;
- returns: how many times the path comes back to a file it had already left.

Issue 23 asks for at most 20 distinct files and 15 returns. The figures depend on the question (a long case
reads more of the question than a short one), so the same questions are asked each time; `--question` asks
another. Nothing is timed. Runs on the embedded database (`MEDCITE_VAR_DIR`), with the seeded library, offline
(the live search is off).

    python benchmarks/question_path.py [--question "..."] [--json]
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import BASE_DIR, setup_django

APPS = ("config", "evidence", "pubmed", "trials", "chat", "research")
GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR | inspect.CO_COROUTINE
QUESTIONS = (
    "apixaban dose in AF with CKD4?",
    "HFpEF + CKD3b (eGFR 36), no DM - SGLT2i?",
    "outpt CAP, no comorbidities - which abx?",
)


def _product_file(frame: FrameType) -> str | None:
    path = Path(frame.f_code.co_filename)
    try:
        relative = path.resolve().relative_to(BASE_DIR)
    except ValueError:
        return None
    return str(relative) if relative.parts and relative.parts[0] in APPS else None


def _carries(value: Any, readings: frozenset[str]) -> bool:
    if isinstance(value, str):
        return value in readings
    return getattr(value, "question", None) in readings


def readings_of(question: str) -> frozenset[str]:
    """Return the question and the readings of it the pipeline passes on: its shorthand spelled out in place, and
    with what the shorthand stands for appended (a helper given either is reading the question)."""
    from chat.pipeline.understand import search_text
    from evidence.lexicon import Lexicon

    lexicon = Lexicon.load().resolved(question)
    return frozenset({question, lexicon.spelled_inline(question), search_text(question, lexicon)})


def follow(question: str) -> list[tuple[str, str]]:
    """Return (file, function) for each call, in order, whose arguments carry `question` or a reading of it."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    user, _ = get_user_model().objects.get_or_create(username="question-path")
    client.force_login(user)
    readings = readings_of(question)
    calls: list[tuple[str, str]] = []
    started: set[FrameType] = set()  # frames already entered: a generator resumed is not a new call

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame in started:
            return
        where = _product_file(frame)
        if where is None:
            return
        if frame.f_code.co_flags & GENERATOR_FLAGS:
            started.add(frame)
        code = frame.f_code
        names = [name for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount] if name != "self"]
        if any(_carries(frame.f_locals.get(name), readings) for name in names):
            calls.append((where, code.co_name))

    sys.setprofile(watch)
    try:
        response = client.post("/chat/new/", {"question": question})
    finally:
        sys.setprofile(None)
    if response.status_code >= 400:
        raise SystemExit(f"The chat page answered {response.status_code} to {question!r}.")
    return calls


def path_of(calls: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Return the calls as stays: one per run of consecutive calls in the same file."""
    stays: list[dict[str, Any]] = []
    for where, function in calls:
        if stays and stays[-1]["file"] == where:
            if function not in stays[-1]["functions"]:
                stays[-1]["functions"].append(function)
            continue
        stays.append({"file": where, "functions": [function]})
    return stays


def measured(stays: list[dict[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    returns = 0
    for stay in stays:
        returns += stay["file"] in seen
        seen.add(stay["file"])
    return {"distinct_files": len(seen), "returns": returns, "stays": len(stays)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--question", action="append", help="ask this question instead (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the figures and paths as JSON")
    args = parser.parse_args()
    setup_django(database="medcite_bench_path")

    from django.conf import settings as django_settings
    from django.core.management import call_command

    from evidence.services.seed import evidence_seed
    from evidence.services.vocabulary_seed import vocabulary_seed

    django_settings.ANSWER_SETTINGS = {**getattr(django_settings, "ANSWER_SETTINGS", {}), "live_search": False}
    call_command("migrate", verbosity=0)
    vocabulary_seed()
    evidence_seed()
    report = []
    for question in args.question or QUESTIONS:
        stays = path_of(follow(question))
        report.append({"question": question, **measured(stays), "path": stays})
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for item in report:
        print(f"# {item['question']}\n{item['distinct_files']} distinct files, {item['returns']} returns")
        for number, stay in enumerate(item["path"], 1):
            print(f"  {number:3}. {stay['file']}  ({', '.join(stay['functions'])})")


if __name__ == "__main__":
    main()
