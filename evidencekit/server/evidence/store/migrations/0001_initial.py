from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise.fields.base import OnDelete
from uuid import uuid4
from tortoise import fields

class Migration(migrations.Migration):
    initial = True

    operations = [
        ops.CreateModel(
            name='Evidence',
            fields=[
                ('id', fields.UUIDField(primary_key=True, default=uuid4, unique=True, db_index=True)),
                ('workspace_id', fields.UUIDField()),
                ('source_key', fields.CharField(max_length=2100)),
                ('kind', fields.CharField(max_length=32)),
                ('language', fields.CharField(default='', max_length=35)),
                ('revision', fields.IntField(default=0)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'evidence', 'app': 'models', 'unique_together': (('workspace_id', 'source_key', 'kind', 'language'),), 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='EvidenceRevision',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('evidence', fields.ForeignKeyField('models.Evidence', source_field='evidence_id', db_constraint=True, to_field='id', related_name='revisions', on_delete=OnDelete.CASCADE)),
                ('revision', fields.IntField()),
                ('content_hash', fields.CharField(max_length=64)),
                ('source_url', fields.CharField(null=True, max_length=2048)),
                ('title', fields.TextField(null=True, unique=False)),
                ('description', fields.TextField(null=True, unique=False)),
                ('text', fields.TextField(unique=False)),
                ('markdown', fields.TextField(null=True, unique=False)),
                ('segments', fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('purged_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'evidence_revision', 'app': 'models', 'unique_together': (('evidence', 'revision'),), 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='RateWindow',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('workspace_id', fields.UUIDField()),
                ('window_start', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('count', fields.IntField(default=0)),
            ],
            options={'table': 'rate_window', 'app': 'models', 'unique_together': (('workspace_id', 'window_start'),), 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Receipt',
            fields=[
                ('id', fields.UUIDField(primary_key=True, default=uuid4, unique=True, db_index=True)),
                ('workspace_id', fields.UUIDField()),
                ('mutation_id', fields.UUIDField()),
                ('input_hash', fields.CharField(max_length=64)),
                ('url', fields.CharField(max_length=2048)),
                ('kind', fields.CharField(max_length=32)),
                ('language', fields.CharField(null=True, max_length=35)),
                ('state', fields.CharField(default='pending', db_index=True, max_length=16)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('settled_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('valid_until', fields.DatetimeField(db_index=True, auto_now=False, auto_now_add=False)),
                ('result', fields.JSONField(null=True, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('evidence', fields.ForeignKeyField('models.Evidence', source_field='evidence_id', null=True, db_constraint=True, to_field='id', related_name='receipts', on_delete=OnDelete.SET_NULL)),
                ('evidence_revision', fields.IntField(null=True)),
                ('attempts', fields.IntField(default=0)),
                ('lease_owner', fields.CharField(null=True, max_length=64)),
                ('lease_expires_at', fields.DatetimeField(null=True, db_index=True, auto_now=False, auto_now_add=False)),
                ('purged_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'receipt', 'app': 'models', 'unique_together': (('workspace_id', 'mutation_id'),), 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='User',
            fields=[
                ('id', fields.UUIDField(primary_key=True, default=uuid4, unique=True, db_index=True)),
                ('name', fields.CharField(unique=True, max_length=200)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'user_account', 'app': 'models', 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Token',
            fields=[
                ('id', fields.UUIDField(primary_key=True, default=uuid4, unique=True, db_index=True)),
                ('owner', fields.ForeignKeyField('models.User', source_field='owner_id', db_constraint=True, to_field='id', related_name='tokens', on_delete=OnDelete.CASCADE)),
                ('kind', fields.CharField(max_length=32)),
                ('secret_hash', fields.CharField(unique=True, max_length=64)),
                ('capabilities', fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('label', fields.CharField(default='', max_length=200)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('expires_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('revoked_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'token', 'app': 'models', 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Workspace',
            fields=[
                ('id', fields.UUIDField(primary_key=True, default=uuid4, unique=True, db_index=True)),
                ('name', fields.CharField(max_length=200)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('retrieve_rate_per_minute', fields.IntField(null=True)),
            ],
            options={'table': 'workspace', 'app': 'models', 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Membership',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('workspace', fields.ForeignKeyField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='memberships', on_delete=OnDelete.CASCADE)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='memberships', on_delete=OnDelete.CASCADE)),
                ('role', fields.CharField(max_length=16)),
            ],
            options={'table': 'membership', 'app': 'models', 'unique_together': (('workspace', 'user'),), 'pk_attr': 'id'},
            bases=['Model'],
        ),
    ]
