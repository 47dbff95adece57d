from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0001_initial')]

    initial = False

    operations = [
        ops.AddField(
            model_name='User',
            name='oauth_subject',
            field=fields.CharField(null=True, unique=True, max_length=255),
        ),
    ]
