# search_documents' index keyed by workspace (store/search_index.py): every row given its
# workspace's scope word (SQLite: a new column and FTS5 table, rebuilt; PostgreSQL: a lexeme added
# to each tsvector), then the documents stored before the index, indexed.
from tortoise import migrations
from tortoise.migrations import operations as ops
from evidencekit.server.evidence.store.search_index import scope_index

class Migration(migrations.Migration):
    dependencies = [('models', '0011_document_search')]

    initial = False

    operations = [
        ops.RunPython(scope_index),
    ]
