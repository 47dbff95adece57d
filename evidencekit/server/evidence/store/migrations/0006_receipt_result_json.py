from tortoise import migrations
from tortoise.migrations import operations as ops

from evidencekit.server.evidence.store.models import StoredJSONField

# On PostgreSQL the column becomes json (kept as written), compressed with lz4 where the server has
# it (14+, built with lz4), else with the default pglz. In one statement: a type change resets the
# column's compression, and the values it rewrites take the compression set beside it. Changing the
# type rewrites the table under an exclusive lock: stop the service while it runs (10 s for 100,000
# receipts with a page of text each on a 2-core machine; the table went from 294 to 422 MB, as lz4
# compresses prose less than pglz, and reads it back about twice as fast). SQLite keeps JSON as text
# already: nothing to do there.
TO_JSON = """
DO $$ BEGIN
  EXECUTE 'ALTER TABLE receipt ALTER COLUMN result TYPE json USING result::json, '
          'ALTER COLUMN result SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN  -- no COMPRESSION clause before 14, or no lz4 in this build
  ALTER TABLE receipt ALTER COLUMN result TYPE json USING result::json;
END $$
"""
TO_JSONB = "ALTER TABLE receipt ALTER COLUMN result TYPE jsonb USING result::jsonb"


class ResultAsWritten(ops.AlterField):
    # For the migration state, an AlterField; in the database, the statements above. tortoise 1.1.9
    # would alter a SQLite column by rebuilding the table (losing its unique constraints). The SQL
    # runs through tortoise's public RunSQL operation.

    async def database_forward(self, app_label, old_state, new_state, state_editor=None):
        if state_editor and state_editor.DIALECT == "postgres":
            await ops.RunSQL(TO_JSON).database_forward(app_label, old_state, new_state, state_editor)

    async def database_backward(self, app_label, old_state, new_state, state_editor=None):
        if state_editor and state_editor.DIALECT == "postgres":
            await ops.RunSQL(TO_JSONB).database_forward(app_label, old_state, new_state, state_editor)


class Migration(migrations.Migration):
    dependencies = [('models', '0005_drop_single_column_receipt_indexes')]

    initial = False

    operations = [
        ResultAsWritten(
            model_name='Receipt',
            name='result',
            field=StoredJSONField(null=True),
        ),
    ]
