"""Hand the AI-column models to the research app; the tables stay (research sets `db_table`)."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("chat", "0002_ai_columns"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="AIColumnResult"),
                migrations.DeleteModel(name="AIColumnRun"),
                migrations.DeleteModel(name="AIColumn"),
            ],
            database_operations=[],
        ),
    ]
