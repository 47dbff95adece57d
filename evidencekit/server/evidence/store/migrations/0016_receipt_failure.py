# Why a retrieval that failed to fetch did (models.Receipt.failure), for the notes that explain a
# result: one nullable column, added without rewriting the table on either database. Receipts
# settled before keep NULL: their notes say only what the result itself says.
from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0015_caption_documents')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Receipt',
            name='failure',
            field=fields.TextField(null=True, unique=False),
        ),
    ]
