# A completed receipt's status answer as checked when it settled (models.Receipt.answer_*): three
# nullable columns, added without rewriting the table on either database. Receipts settled before
# keep NULL there and are checked on every read, as before.
from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0006_receipt_result_json')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Receipt',
            name='answer_contract',
            field=fields.CharField(null=True, max_length=80),
        ),
        ops.AddField(
            model_name='Receipt',
            name='answer_head',
            field=fields.TextField(null=True, unique=False),
        ),
        ops.AddField(
            model_name='Receipt',
            name='answer_tail',
            field=fields.TextField(null=True, unique=False),
        ),
    ]
