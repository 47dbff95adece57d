# search_documents' index keyed by workspace, its words capped (store/search_index.py): SQLite's
# FTS5 table made again with a scope column, then every document served now indexed again as a
# settle writes it (PostgreSQL: its scope lexeme in the tsvector).
from tortoise import migrations
from tortoise.migrations import operations as ops
from evidencekit.server.evidence.store.search_index import scope_index

class Migration(migrations.Migration):
    dependencies = [('models', '0011_document_search')]

    initial = False

    operations = [
        ops.RunPython(scope_index),
    ]
