# Stored names made what a settle makes now (server/evidence/source_urls.py): tracking parameters
# dropped and secret values hashed in evidence keys and search names, secret values redacted in
# the URLs results and revisions show (store/source_renames.py).
from tortoise import migrations
from tortoise.migrations import operations as ops
from evidencekit.server.evidence.store.source_renames import rename_sources

class Migration(migrations.Migration):
    dependencies = [('models', '0016_receipt_failure')]

    initial = False

    operations = [
        ops.RunPython(rename_sources),
    ]
