# search_documents' index holds the forms of each document's words (server/evidence/search_forms.py:
# stems, compound parts, Hebrew without prefix letters, long words' endings): SQLite's FTS5 table
# made again with two more columns, PostgreSQL's tsvector with them weighted C and D; then every
# document served now indexed again as a settle writes it.
from tortoise import migrations
from tortoise.migrations import operations as ops
from evidencekit.server.evidence.store.search_index import forms_index

class Migration(migrations.Migration):
    dependencies = [('models', '0013_store_key')]

    initial = False

    operations = [
        ops.RunPython(forms_index),
    ]
