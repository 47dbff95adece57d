# Workers' heartbeats (models.WorkerBeat): a new table of one row per running worker, nothing
# rewritten. Workers of earlier versions write none: their receipts wait out their leases, as before.
from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0009_drop_rate_window')]

    initial = False

    operations = [
        ops.CreateModel(
            name='WorkerBeat',
            fields=[
                ('worker_id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=64)),
                ('beat_at', fields.FloatField()),
                ('every', fields.FloatField()),
            ],
            options={'table': 'worker_beat', 'app': 'models', 'pk_attr': 'worker_id'},
            bases=['Model'],
        ),
    ]
