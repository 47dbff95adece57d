# Caption tracks as documents (store/caption_documents.py): the revisions of published_captions
# evidence stored before written again with their cue text and timestamped cue lines, and the ones
# get_documents serves now indexed for search_documents. No schema change.
# (0014 and 0015 were written beside it: merged, it depends on the latest of them.)
from tortoise import migrations
from tortoise.migrations import operations as ops
from evidencekit.server.evidence.store.caption_documents import caption_documents

class Migration(migrations.Migration):
    dependencies = [('models', '0014_search_forms')]

    initial = False

    operations = [
        ops.RunPython(caption_documents),
    ]
