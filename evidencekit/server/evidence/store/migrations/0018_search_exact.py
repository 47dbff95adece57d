# PostgreSQL's search_documents index keeps a document's words alone beside the words and their
# forms (store/search_index.py): the exact stage of a query reads a third of the tsvector.
from tortoise import migrations
from tortoise.migrations import operations as ops

from evidencekit.server.evidence.store.search_index import exact_index


class Migration(migrations.Migration):
    dependencies = [('models', '0017_source_names')]

    initial = False

    operations = [
        ops.RunPython(exact_index),
    ]
