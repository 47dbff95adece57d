# PostgreSQL compresses a settle's wide values with lz4 where the server has it (14+, built with
# lz4), as the receipt's result since 0006: a revision's text, markdown and segments and
# document_words' copy of the index words. pglz took ~4 ms of the database's CPU a settled 200 KB
# page (scripts/bench_drain.py), lz4 a fifth of it, for about 1.3x the bytes of prose. The search
# index's tsvectors keep theirs: pglz leaves them uncompressed, and a search reads 500 of them.
# Only values written from now on are compressed so; the rows stored before stay as they are
# (each column names its compression, no table is rewritten). SQLite: nothing to do.
from tortoise import migrations
from tortoise.migrations import operations as ops

from evidencekit.server.evidence.store.sql import is_postgres_connection

LZ4 = """
DO $$ BEGIN
  EXECUTE 'ALTER TABLE evidence_revision ALTER COLUMN text SET COMPRESSION lz4, '
          'ALTER COLUMN markdown SET COMPRESSION lz4, ALTER COLUMN segments SET COMPRESSION lz4';
  EXECUTE 'ALTER TABLE document_words ALTER COLUMN words SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN  -- no COMPRESSION clause before 14, or no lz4 in this build: pglz stays
  NULL;
END $$
"""


async def lz4_columns(_apps, schema_editor) -> None:  # type: ignore[no-untyped-def]
    if is_postgres_connection(schema_editor.client):
        await schema_editor.client.execute_script(LZ4)


class Migration(migrations.Migration):
    dependencies = [('models', '0018_search_exact')]

    initial = False

    operations = [
        ops.RunPython(lz4_columns),
    ]
