# search_documents' index (store/search_index.py): its table, then what tortoise cannot declare
# (SQLite's FTS5 table and triggers, PostgreSQL's generated tsvector and GIN index), then the
# documents stored before, indexed as a settle would have.
from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.indexes import Index
from evidencekit.server.evidence.store.search_index import create_index

class Migration(migrations.Migration):
    dependencies = [('models', '0010_worker_beat')]

    initial = False

    operations = [
        ops.CreateModel(
            name='DocumentSearch',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('evidence_id', fields.UUIDField(unique=True)),
                ('workspace_id', fields.UUIDField()),
                ('revision', fields.IntField()),
                ('name_key', fields.CharField(max_length=2100)),
                ('valid_until', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('title_words', fields.TextField(unique=False)),
                ('body_words', fields.TextField(unique=False)),
            ],
            options={'table': 'document_search', 'app': 'models', 'indexes': [Index(fields=['valid_until']), Index(fields=['name_key'])], 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.RunPython(create_index),
    ]
