"""Answer one question when a server starts, so the first clinician does not wait for what loads on first use.

The first answer of a process loads the embedding and claim-verifier models, compiles the vocabulary's
patterns and reads the library, lexicon and word table: on a machine whose disk cache was cold (a fresh
`make run`) it took 7.7 s, against 0.2 s for the next. A server process (runserver's serving child,
gunicorn or uvicorn) answers a question from the curated library in a background thread as it starts; no
conversation or message is stored and PubMed is not searched. `MEDCITE_WARM_UP=0` turns it off.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence

import structlog
from django.db import connections

logger = structlog.get_logger(__name__)

WARM_UP_QUESTION = "Apixaban or warfarin in atrial fibrillation with chronic kidney disease?"


def serves_requests(argv: Sequence[str], environ: dict[str, str]) -> bool:
    """Return True for a process that will answer requests: runserver's serving child, gunicorn or uvicorn."""
    if environ.get("MEDCITE_WARM_UP", "1") == "0":
        return False
    program = os.path.basename(argv[0]) if argv else ""
    if program in ("gunicorn", "uvicorn"):
        return True
    if argv[1:2] == ["runserver"]:
        # With the autoreloader, the first process only watches files; its child (RUN_MAIN) serves.
        return environ.get("RUN_MAIN") == "true" or "--noreload" in argv
    return False


def warm_up() -> float:
    """Answer `WARM_UP_QUESTION` from stored evidence only; return the seconds it took (logged, never raised)."""
    from chat.answer_settings import answer_settings
    from chat.pipeline import answer_question

    started = time.perf_counter()
    try:
        result = answer_question(question=WARM_UP_QUESTION, settings=answer_settings(live_search=False))
    except Exception:  # a failed warm-up costs only the speed of the first answer
        logger.exception("warm_up_failed")
        return time.perf_counter() - started
    seconds = time.perf_counter() - started
    logger.info("warm_up_done", seconds=round(seconds, 2), confidence=result.confidence, cited=len(result.references))
    return seconds


def _warm_up_and_close() -> None:
    try:
        warm_up()
    finally:
        connections.close_all()  # this thread's connections: it serves nothing after


def start_warm_up() -> None:
    """Warm up in a background thread when this process serves requests."""
    if serves_requests(sys.argv, dict(os.environ)):
        threading.Thread(target=_warm_up_and_close, name="medcite-warm-up", daemon=True).start()
