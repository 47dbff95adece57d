# Secrets the store keeps (models.StoreKey, store/store_keys.py): a new table, filled on first use.
from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0012_search_scope')]

    initial = False

    operations = [
        ops.CreateModel(
            name='StoreKey',
            fields=[
                ('name', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=64)),
                ('secret', fields.CharField(max_length=128)),
            ],
            options={'table': 'store_key', 'app': 'models', 'pk_attr': 'name'},
            bases=['Model'],
        ),
    ]
