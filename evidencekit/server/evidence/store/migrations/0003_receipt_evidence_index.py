from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0002_user_oauth_subject')]

    initial = False

    operations = [
        ops.AddIndex(
            model_name='Receipt',
            index=Index(fields=['evidence_id', 'evidence_revision']),
        ),
    ]
