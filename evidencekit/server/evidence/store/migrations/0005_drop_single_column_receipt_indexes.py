from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class DropFieldIndex(ops.AlterField):
    # For the migration state, an AlterField (the field loses db_index); in the database, only its
    # index is dropped. tortoise 1.1.9 alters a SQLite column by rebuilding the table, which loses
    # the table's unique_together constraints (tests/server/store/test_migrations.py compares the
    # migrated schema with the models'). The SQL runs through tortoise's public RunSQL operation.

    def __init__(self, model_name, name, field, index):
        super().__init__(model_name, name, field)
        self.index = index

    async def database_forward(self, app_label, old_state, new_state, state_editor=None):
        drop = ops.RunSQL(f'DROP INDEX IF EXISTS "{self.index}"')
        await drop.database_forward(app_label, old_state, new_state, state_editor)

    async def database_backward(self, app_label, old_state, new_state, state_editor=None):
        raise NotImplementedError("the dropped single-column indexes are not made again")


class Migration(migrations.Migration):
    # Served by the (state, ...) and (purged_at, valid_until) indexes of 0004: every receipt update
    # maintained three indexes nothing read.
    dependencies = [('models', '0004_receipt_claim_indexes')]

    initial = False

    operations = [
        DropFieldIndex(model_name='Receipt', name='state', index='idx_receipt_state_54144e',
                       field=fields.CharField(default='pending', max_length=16)),
        DropFieldIndex(model_name='Receipt', name='valid_until', index='idx_receipt_valid_u_e384bc',
                       field=fields.DatetimeField(auto_now=False, auto_now_add=False)),
        DropFieldIndex(model_name='Receipt', name='lease_expires_at', index='idx_receipt_lease_e_7f4ebc',
                       field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
    ]
