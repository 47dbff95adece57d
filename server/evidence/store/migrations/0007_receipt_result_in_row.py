from tortoise import migrations
from tortoise.migrations import operations as ops

from evidencekit.server.evidence.store.models import StoredJSONField

# On PostgreSQL a receipt's result stays in the receipt's row, compressed (STORAGE MAIN), instead of
# moving to the TOAST table once it passes ~2 KB (EXTENDED, the default). A page of prose barely
# compresses (6,000 characters: 5.6 KB with lz4), so under EXTENDED every settled status read also
# looked the result up in the TOAST table's index and read its chunks: 26 against 16 us a row for
# 32-row batched reads, server and database together (docs/benchmarks.md). A result too large for
# the row's page still moves out. Only the catalog changes, at once: stored results stay where they
# are until rewritten; every result written from now on is kept in its row. SQLite keeps a row's
# overflow in the row's own page chain already: nothing to do there.
IN_ROW = "ALTER TABLE receipt ALTER COLUMN result SET STORAGE MAIN"


class ResultInRow(ops.AlterField):
    # For the migration state, an AlterField with no change; in the database, the statement above.

    async def database_forward(self, app_label, old_state, new_state, state_editor=None):
        if state_editor and state_editor.DIALECT == "postgres":
            await state_editor._run_sql(IN_ROW)

    async def database_backward(self, app_label, old_state, new_state, state_editor=None):
        if state_editor and state_editor.DIALECT == "postgres":
            await state_editor._run_sql("ALTER TABLE receipt ALTER COLUMN result SET STORAGE EXTENDED")


class Migration(migrations.Migration):
    dependencies = [('models', '0006_receipt_result_json')]

    initial = False

    operations = [
        ResultInRow(
            model_name='Receipt',
            name='result',
            field=StoredJSONField(null=True),
        ),
    ]
