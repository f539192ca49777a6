"""The live PubMed query keeps the question: the condition AND the decision or intervention, no repeats.

The table (live_queries.json) holds real clinical questions as a clinician types them and the
query each must produce.
"""

import json
from pathlib import Path

import pytest

from chat.answer_settings import answer_settings
from chat.pipeline.live_search import live_search_query
from chat.pipeline.state import AnswerRun
from chat.pipeline.understand import understand

pytestmark = pytest.mark.django_db

QUERIES = [
    (row["question"], row["query"]) for row in json.loads((Path(__file__).parent / "live_queries.json").read_text())
]


@pytest.mark.parametrize(("question", "query"), QUERIES)
def test_live_query_is_condition_and_decision_with_synonyms(library, question, query):
    run = AnswerRun(question=question, settings=answer_settings())
    understand(run)
    assert live_search_query(run) == query


@pytest.mark.parametrize(("question", "query"), QUERIES)
def test_live_query_never_repeats_a_clause(question, query):
    clauses = [part.strip("() ") for part in query.split(" AND ")]
    assert len(clauses) == len(set(clauses))


def test_the_table_covers_at_least_twenty_questions():
    assert len(QUERIES) >= 20 and len({question for question, _ in QUERIES}) == len(QUERIES)
