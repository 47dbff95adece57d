from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0003_receipt_evidence_index')]

    initial = False

    operations = [
        ops.AddIndex(
            model_name='Receipt',
            index=Index(fields=['state', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Receipt',
            index=Index(fields=['state', 'workspace_id', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Receipt',
            index=Index(fields=['purged_at', 'valid_until']),
        ),
    ]
