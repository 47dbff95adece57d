"""What the service keeps: workspaces, people, tokens, receipts (with their job lease), evidence.

Models carry comments, not docstrings: tortoise turns a docstring into a table comment, and its
SQLite migration runner splits statements at any ';' inside one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tortoise import fields
from tortoise.indexes import Index
from tortoise.models import Model

from evidencekit.server.evidence.store.sql import stored_json, stored_value

ROLES = ("viewer", "editor", "admin", "owner")
TOKEN_KINDS = ("user_session", "delegated_oauth", "personal_access_token")
STATES = ("pending", "running", "completed", "cancelled", "unconfirmed", "expired")


class StoredJSONField(fields.JSONField):  # type: ignore[type-arg]
    # JSON kept as the text written, on PostgreSQL too (json, not tortoise's jsonb): a status read
    # gets a settled result back with no conversion. jsonb's output function cost the database
    # ~30 us for a result with a page of text (on a 2-core machine, CPU the service and its
    # clients share); nothing queries inside a result. Compressed with lz4 where the server has it
    # (migration 0006): read back ~2x quicker than with the default pglz, stored ~1.3x larger.
    # Written as UTF-8 and read with pydantic-core, by the ORM and the raw statements alike (sql.py).

    class _db_postgres:
        SQL_TYPE = "JSON"

    def __init__(self, encoder: Callable[[Any], str] = stored_json,
                 decoder: Callable[[str | bytes], Any] = stored_value, **kwargs: Any) -> None:
        super().__init__(encoder=encoder, decoder=decoder, **kwargs)


class WhereIndex(Index):
    """An index of the rows `where` holds: a partial index (PostgreSQL and SQLite alike). tortoise's
    own PartialIndex writes only `column = value` conditions, never `IS NULL`."""

    def __init__(self, *, fields: list[str], where: str) -> None:
        super().__init__(fields=fields)
        self.where = where
        self.extra = f" WHERE {where}"

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        path, args, kwargs = super().deconstruct()
        return path, args, {**kwargs, "where": self.where}


class Workspace(Model):
    id = fields.UUIDField(primary_key=True)
    name = fields.CharField(max_length=200)
    created_at = fields.DatetimeField(auto_now_add=True)
    # retrieve calls allowed per minute in this workspace (None: the server default)
    retrieve_rate_per_minute = fields.IntField(null=True)

    class Meta:
        table = "workspace"


class User(Model):
    id = fields.UUIDField(primary_key=True)
    name = fields.CharField(max_length=200, unique=True)
    created_at = fields.DatetimeField(auto_now_add=True)
    # the `sub` of this user's access tokens from the external authorization server (delegated_oauth)
    oauth_subject = fields.CharField(max_length=255, unique=True, null=True)

    class Meta:
        table = "user_account"


class Membership(Model):
    id = fields.IntField(primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="memberships", on_delete=fields.CASCADE)
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="memberships", on_delete=fields.CASCADE)
    role = fields.CharField(max_length=16)

    class Meta:
        table = "membership"
        unique_together = (("workspace", "user"),)


class Token(Model):
    # A credential. Only its sha256 is stored; the secret is shown once, at creation.

    id = fields.UUIDField(primary_key=True)
    owner: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="tokens", on_delete=fields.CASCADE)
    kind = fields.CharField(max_length=32)
    secret_hash = fields.CharField(max_length=64, unique=True)
    capabilities: fields.Field[list[str]] = fields.JSONField(default=list)
    label = fields.CharField(max_length=200, default="")
    created_at = fields.DatetimeField(auto_now_add=True)
    expires_at = fields.DatetimeField(null=True)
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "token"


class Evidence(Model):
    # One source: (workspace, normalized URL, kind, language). Revisions change only with its content.

    id = fields.UUIDField(primary_key=True)
    workspace_id = fields.UUIDField()
    source_key = fields.CharField(max_length=2100)
    kind = fields.CharField(max_length=32)
    language = fields.CharField(max_length=35, default="")  # "" when none was requested
    revision = fields.IntField(default=0)
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "evidence"
        unique_together = (("workspace_id", "source_key", "kind", "language"),)


class EvidenceRevision(Model):
    id = fields.IntField(primary_key=True)
    evidence: fields.ForeignKeyRelation[Evidence] = fields.ForeignKeyField(
        "models.Evidence", related_name="revisions", on_delete=fields.CASCADE)
    revision = fields.IntField()
    content_hash = fields.CharField(max_length=64)
    source_url = fields.CharField(max_length=2048, null=True)
    title = fields.TextField(null=True)
    description = fields.TextField(null=True)
    text = fields.TextField()
    markdown = fields.TextField(null=True)
    segments: fields.Field[list[dict[str, Any]]] = fields.JSONField(default=list)
    created_at = fields.DatetimeField(auto_now_add=True)
    purged_at = fields.DatetimeField(null=True)

    class Meta:
        table = "evidence_revision"
        unique_together = (("evidence", "revision"),)


class Receipt(Model):
    # A retrieval receipt and its job: the row a worker claims, leases, and settles.

    id = fields.UUIDField(primary_key=True)
    workspace_id = fields.UUIDField()
    mutation_id = fields.UUIDField()
    input_hash = fields.CharField(max_length=64)  # of (url, kind, language): a different input conflicts
    url = fields.CharField(max_length=2048)
    kind = fields.CharField(max_length=32)
    language = fields.CharField(max_length=35, null=True)
    state = fields.CharField(max_length=16, default="pending")
    created_at = fields.DatetimeField()
    settled_at = fields.DatetimeField(null=True)
    valid_until = fields.DatetimeField()
    result: fields.Field[dict[str, Any] | None] = StoredJSONField(null=True)
    evidence: fields.ForeignKeyNullableRelation[Evidence] = fields.ForeignKeyField(
        "models.Evidence", related_name="receipts", null=True, on_delete=fields.SET_NULL)
    evidence_revision = fields.IntField(null=True)
    attempts = fields.IntField(default=0)
    lease_owner = fields.CharField(max_length=64, null=True)
    lease_expires_at = fields.DatetimeField(null=True)
    purged_at = fields.DatetimeField(null=True)
    # A completed receipt's status answer as checked when it settled, without its result
    # (checked_answer.Frame): a status read sends head + result's text + tail, parsing and
    # checking nothing again while the status contract's hash is answer_contract. NULL (receipts
    # in any other state, or settled before these columns): built and checked on every read.
    answer_contract = fields.CharField(max_length=80, null=True)
    answer_head = fields.TextField(null=True)
    answer_tail = fields.TextField(null=True)
    # Why a retrieval that failed to fetch did, for people (the fetch's error; the result has no
    # field for it): what a note explaining the result names (handlers); NULL otherwise.
    failure = fields.TextField(null=True)

    class Meta:
        table = "receipt"
        unique_together = (("workspace_id", "mutation_id"),)
        indexes = (("evidence_id", "evidence_revision"),  # the purge asks which receipts refer to a revision
                   ("state", "created_at"),  # claims: the oldest waiting receipts
                   ("state", "workspace_id", "created_at"),  # claims: each workspace's oldest
                   # The purge: the receipts not purged yet, in valid_until order. An index on
                   # (purged_at, valid_until) gave PostgreSQL no order (IS NULL is no equality to
                   # it): each batch read every receipt due, a whole-table scan at 10^6 receipts.
                   WhereIndex(fields=["valid_until"], where="purged_at IS NULL"))


class WorkerBeat(Model):
    # A worker's heartbeat, written every few seconds while it runs (store/heartbeats.py): a lease
    # holder whose beat has stopped is dead, and its receipts are taken up before their leases end.

    worker_id = fields.CharField(max_length=64, primary_key=True)
    beat_at = fields.FloatField()  # Unix time by the database's clock: no two machines' clocks compared
    every = fields.FloatField()  # the seconds between this worker's beats (its own setting)

    class Meta:
        table = "worker_beat"


class DocumentSearch(Model):
    # search_documents' index (store/search_index.py): one row per document evidence (a page, a
    # caption track: store/served_documents.py), holding the words (search_text.words) of its
    # current revision while a receipt not yet expired refers to it. SQLite indexes the words in the
    # FTS5 table document_search_fts (kept by triggers), PostgreSQL in a tsvector column `search`
    # with a GIN index, and keeps the words columns empty (migration 0011), neither declared here:
    # tortoise knows neither.

    id = fields.BigIntField(primary_key=True)  # FTS5's rowid
    evidence_id = fields.UUIDField(unique=True)
    workspace_id = fields.UUIDField()
    revision = fields.IntField()
    name_key = fields.CharField(max_length=2100)  # the source URL without its scheme: the document's name
    valid_until = fields.DatetimeField()  # the latest valid_until of the receipts referring to the revision
    title_words = fields.TextField()
    body_words = fields.TextField()

    class Meta:
        table = "document_search"
        indexes = (("valid_until",),  # the purge: rows whose receipts have all expired
                   ("name_key",))  # a page's names to the rows that hold them


class StoreKey(Model):
    # A secret the store keeps for itself (store/store_keys.py): made at random on first use, the
    # same for every process sharing the database. `page_token` signs search_documents' page tokens.

    name = fields.CharField(max_length=64, primary_key=True)
    secret = fields.CharField(max_length=128)  # hex

    class Meta:
        table = "store_key"
