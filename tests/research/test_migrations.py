"""Moving the AI-column models from chat to research keeps their tables and rows."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from research.models import AIColumn, AIColumnResult
from tests.research.factories import AIColumnFactory, AIColumnResultFactory

BEFORE_MOVE = [("chat", "0002_ai_columns"), ("research", None)]
TABLES = {"chat_aicolumn", "chat_aicolumnrun", "chat_aicolumnresult"}


def _migrate(targets: list[tuple[str, str | None]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def _leaves() -> list[tuple[str, str | None]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_migrating_from_before_the_move_keeps_the_ai_column_tables_and_rows() -> None:
    result = AIColumnResultFactory(column=AIColumnFactory(page="trialscout"), item_id="NCT01234567", value="yes")
    _migrate(BEFORE_MOVE)
    try:
        assert set(connection.introspection.table_names()) >= TABLES
        with connection.cursor() as cursor:
            cursor.execute("SELECT item_id, value FROM chat_aicolumnresult WHERE id = %s", [result.pk])
            assert cursor.fetchall() == [("NCT01234567", "yes")]
    finally:
        _migrate(_leaves())
    assert set(connection.introspection.table_names()) >= TABLES
    assert AIColumnResult.objects.get(pk=result.pk).value == "yes"
    assert AIColumn.objects.get(pk=result.column_id).page == "trialscout"


def test_the_move_changes_no_table() -> None:
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    for key in [("chat", "0003_ai_columns_to_research"), ("research", "0001_initial")]:
        migration = graph.nodes[key]
        (operation,) = migration.operations
        assert operation.database_operations == [], key
    assert {model._meta.db_table for model in (AIColumn, AIColumnResult)} == {"chat_aicolumn", "chat_aicolumnresult"}
