"""Keep each chunk's tsvector in its row (STORAGE MAIN) instead of moving it to TOAST.

Full-text search ranks up to thousands of candidate chunks with ts_rank, which reads every candidate's
tsvector. Out of line, each read is a TOAST index lookup plus a TOAST page (at a million abstracts
two thirds of the ranking's buffer reads, benchmarks/README.md). With MAIN the toaster moves the
chunk text out of line first and keeps the tsvector (compressed) in the heap row the bitmap scan has
already read. Rows written before this migration keep their layout until they are rewritten.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("pubmed", "0010_record_file_loads")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE pubmed_abstractchunk ALTER COLUMN search_vector SET STORAGE MAIN",
            reverse_sql="ALTER TABLE pubmed_abstractchunk ALTER COLUMN search_vector SET STORAGE EXTENDED",
        )
    ]
