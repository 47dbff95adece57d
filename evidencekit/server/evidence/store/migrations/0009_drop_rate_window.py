# The retrieve rate counts a workspace's receipts of the last 60 s (store/ratelimit.py, a sliding
# window) instead of per-minute counters: their table goes. Nothing else refers to it.
from tortoise import migrations
from tortoise.migrations import operations as ops

class Migration(migrations.Migration):
    dependencies = [('models', '0008_receipt_unpurged_index')]

    initial = False

    operations = [
        ops.DeleteModel(name='RateWindow'),
    ]
