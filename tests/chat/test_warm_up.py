"""A server answers one question as it starts, so the first clinician's answer does not load the models."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from chat.models import Conversation, Message
from chat.warm_up import serves_requests, warm_up


@pytest.mark.parametrize(
    ("argv", "environ", "serves"),
    [
        (["manage.py", "runserver", "127.0.0.1:8000"], {"RUN_MAIN": "true"}, True),  # the autoreloader's child
        (["manage.py", "runserver", "127.0.0.1:8000"], {}, False),  # the autoreloader itself only watches files
        (["manage.py", "runserver", "--noreload"], {}, True),
        (["/app/.venv/bin/gunicorn", "config.asgi:application"], {}, True),
        (["/app/.venv/bin/uvicorn", "config.asgi:application"], {}, True),
        (["manage.py", "ask", "apixaban dose?"], {}, False),
        (["manage.py", "migrate"], {}, False),
        (["/app/.venv/bin/celery", "-A", "config", "worker"], {}, False),
        (["/app/.venv/bin/pytest"], {}, False),
        (["/app/.venv/bin/gunicorn", "config.asgi:application"], {"MEDCITE_WARM_UP": "0"}, False),
    ],
)
def test_only_a_process_that_serves_requests_warms_up(argv, environ, serves):
    assert serves_requests(argv, environ) is serves


@pytest.mark.django_db
def test_the_warm_up_answers_from_the_library_and_stores_nothing(library, eutils):
    with capture_logs() as logs:
        warm_up()
    (done,) = [log for log in logs if log["event"].startswith("warm_up")]
    # It answered from the library, so the models, vocabulary and library were all read.
    assert (done["event"], done["confidence"] != "RED", done["cited"] > 0) == ("warm_up_done", True, True), done
    assert not Conversation.objects.exists() and not Message.objects.exists()
    assert eutils.log == []  # PubMed is not searched
