"""Backfill the evidence level of stored abstracts and mark those PubMed already typed as retracted.

Correction links (RetractionIn, ExpressionOfConcernIn) were not stored before, so records retracted
only by link are found by `manage.py refresh_abstracts`, which fetches stored PMIDs again.
"""

from django.db import migrations

BATCH = 500


def backfill(apps, schema_editor):
    from evidence.levels import assess_level

    Abstract = apps.get_model("pubmed", "Abstract")
    rows = Abstract.objects.only("pmid", "title", "abstract", "publication_types", "mesh_terms").order_by("pmid")
    pending = []
    for row in rows.iterator(chunk_size=BATCH):
        level = assess_level(
            publication_types=row.publication_types, mesh_terms=row.mesh_terms, title=row.title, abstract=row.abstract
        )
        row.evidence_level, row.evidence_level_inferred = level.level, level.inferred
        row.is_retracted = any(value.strip().lower() == "retracted publication" for value in row.publication_types)
        pending.append(row)
        if len(pending) >= BATCH:
            Abstract.objects.bulk_update(pending, ["evidence_level", "evidence_level_inferred", "is_retracted"])
            pending = []
    if pending:
        Abstract.objects.bulk_update(pending, ["evidence_level", "evidence_level_inferred", "is_retracted"])


class Migration(migrations.Migration):
    dependencies = [("pubmed", "0008_abstract_retractions_and_evidence_level")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True)]
