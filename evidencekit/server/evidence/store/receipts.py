"""Receipts: created once per (workspace, mutation_id), read back as the contract's `retrieval`.

A repeat with the same input returns the same receipt; the same mutation_id with another input
is a conflict and changes nothing. Past `valid_until` a receipt reads as `expired` and its source
content is hidden (and purged by the sweeper).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import rfc8785
from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from evidencekit.server.evidence.env_check import setting
from evidencekit.server.evidence.store import search_index
from evidencekit.server.evidence.store.ids import new_id
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipt_reads import ReceiptView, find_view
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    param,
    sql_time,
    sql_uuid,
)
from evidencekit.server.evidence.store.timestamps import as_datetime, contract_time
from evidencekit.server.evidence.store.write_transaction import write_transaction

DEFAULT_RETENTION = timedelta(hours=24)
RETENTION_ENV = "EVIDENCEKIT_RETENTION_HOURS"
HIDDEN_WHEN_EXPIRED: dict[str, Any] = {"text": "", "title": None, "description": None, "segments": []}


class MutationConflict(Exception):
    """The mutation_id was already used in this workspace with a different input."""

    def __init__(self, mutation_id: uuid.UUID) -> None:
        super().__init__(f"mutation_id {mutation_id} was used with a different input: use a new mutation_id "
                         "(a fresh UUID) for a different retrieval, or repeat the exact same input to read this one")


@dataclass(frozen=True)
class RetrieveRequest:
    workspace_id: uuid.UUID
    mutation_id: uuid.UUID
    url: str
    kind: str
    language: str | None = None

    @property
    def input_hash(self) -> str:
        identity = {"url": self.url, "kind": self.kind, "language": self.language}
        return hashlib.sha256(rfc8785.dumps(identity)).hexdigest()


def retention_from_env(environ: dict[str, str] | None = None) -> timedelta:
    value = setting(RETENTION_ENV, "", environ)
    return timedelta(hours=float(value)) if value else DEFAULT_RETENTION


def utcnow() -> datetime:
    return datetime.now(UTC)


async def existing(request: RetrieveRequest) -> ReceiptView | None:
    """The receipt already made for this (workspace, mutation_id), or None; another input is a conflict."""
    view = await find_view(request.workspace_id, request.mutation_id)
    if view is not None and view.input_hash != request.input_hash:
        raise MutationConflict(request.mutation_id)
    return view


_INSERT = """
INSERT INTO receipt (id, workspace_id, mutation_id, input_hash, url, kind, language, state, created_at,
                     valid_until, attempts)
VALUES ({p1}, {p2}, {p3}, {p4}, {p5}, {p6}, {p7}, 'pending', {p8}, {p9}, 0)
ON CONFLICT (workspace_id, mutation_id) DO NOTHING
RETURNING id
"""


# Called with the transaction that inserted a new receipt; raising undoes the insert.
Admission = Callable[[BaseDBAsyncClient], Awaitable[None]]


async def submit(request: RetrieveRequest, *, now: datetime | None = None,
                 retention: timedelta = DEFAULT_RETENTION, admit: Admission | None = None) -> tuple[Receipt, bool]:
    """The receipt for this request, and whether this call created it (and so queued its job).

    One statement for a new mutation_id (the common case): the insert yields to the unique
    (workspace_id, mutation_id), and only a repeat reads the receipt already there. `admit` runs
    only for a receipt this call created, in the insert's transaction: a concurrent identical call
    waits on the unique key until that commits or rolls back, so it is never charged as new."""
    created_at = now or utcnow()
    receipt = Receipt(id=new_id(), workspace_id=request.workspace_id, mutation_id=request.mutation_id,
                      input_hash=request.input_hash, url=request.url, kind=request.kind,
                      language=request.language, state="pending", created_at=created_at,
                      valid_until=created_at + retention, attempts=0)
    async with write_transaction() as connection:
        postgres = is_postgres_connection(connection)
        rows = await connection.execute_query_dict(dialect_params(_INSERT, postgres), [
            *(sql_uuid(value, postgres) for value in (receipt.id, request.workspace_id, request.mutation_id)),
            request.input_hash, request.url, request.kind,
            request.language, sql_time(created_at, postgres), sql_time(receipt.valid_until, postgres)])
        if rows and admit is not None:
            await admit(connection)
    if rows:
        return receipt, True
    found = await Receipt.get(workspace_id=request.workspace_id, mutation_id=request.mutation_id)
    if found.input_hash != request.input_hash:
        raise MutationConflict(request.mutation_id)
    return found, False


def as_retrieval(receipt: Receipt | ReceiptView, *, now: datetime | None = None) -> dict[str, Any]:
    """The receipt as the contract's `retrieval` object, with expiry applied at read time.

    A completed receipt keeps the answer this made when it settled (status_answer): a change to
    what this writes must bump status_answer.ANSWER_VERSION."""
    expired = (now or utcnow()) >= as_datetime(receipt.valid_until) or receipt.state == "expired"
    result = receipt.result
    if expired and result is not None:
        result = {**result, **HIDDEN_WHEN_EXPIRED}
    evidence = None
    evidence_id = receipt.evidence_id  # type: ignore[union-attr]
    if evidence_id is not None and receipt.evidence_revision is not None:
        evidence = {"evidence_id": str(evidence_id), "revision": receipt.evidence_revision}
    return {
        "id": str(receipt.id),
        "workspace_id": str(receipt.workspace_id),
        "mutation_id": str(receipt.mutation_id),
        "state": "expired" if expired else receipt.state,
        "kind": receipt.kind,
        "created_at": contract_time(receipt.created_at),
        "settled_at": None if receipt.settled_at is None else contract_time(receipt.settled_at),
        "valid_until": contract_time(receipt.valid_until),
        "result": result,
        "evidence": evidence,
    }


async def cancel(workspace_id: uuid.UUID, mutation_id: uuid.UUID, result: dict[str, Any]) -> bool:
    """Cancel a pending or running receipt (a worker still holding it then fails to settle)."""
    now = utcnow()
    changed = await Receipt.filter(workspace_id=workspace_id, mutation_id=mutation_id,
                                   state__in=["pending", "running"]).update(
        state="cancelled", settled_at=now, result=result, lease_owner=None, lease_expires_at=None)
    return changed == 1


def _hide_expired(postgres: bool) -> str:
    """SQL for a receipt's result with HIDDEN_WHEN_EXPIRED merged in (JSON null stays null, not removed)."""
    if postgres:
        return f"(result::jsonb || '{json.dumps(HIDDEN_WHEN_EXPIRED)}'::jsonb)::json"
    pairs = ", ".join(f"'$.{key}', json('{json.dumps(value)}')" for key, value in HIDDEN_WHEN_EXPIRED.items())
    return f"json_set(result, {pairs})"


PURGE_BATCH = 500  # receipts expired per transaction: no lock held long, no statement touching everything

# The next receipts past valid_until not purged yet, through the receipt index of valid_until
# where purged_at IS NULL, in its order: the ones purged before are not read again, and a batch
# reads its own receipts only, however many more are due.
_DUE = """
SELECT id{uuid_text} AS id FROM receipt WHERE purged_at IS NULL AND valid_until <= {p1} ORDER BY valid_until LIMIT {p2}
"""
# The revisions the batch's receipts refer to, their evidence rows locked (PostgreSQL), in id order.
_LOCK_SOURCES = """
SELECT source.id FROM receipt AS done JOIN evidence AS source ON source.id = done.evidence_id
WHERE done.id IN ({ids}) ORDER BY source.id FOR UPDATE OF source
"""
_EXPIRE = """
UPDATE receipt SET state = 'expired', purged_at = {p1}, lease_owner = NULL, lease_expires_at = NULL,
                   answer_contract = NULL, answer_head = NULL, answer_tail = NULL,
                   result = CASE WHEN result IS NULL THEN NULL ELSE {hidden} END
WHERE id IN ({ids}) AND purged_at IS NULL
"""
# Of the revisions the batch's receipts refer to, those no unexpired receipt refers to any more
# (the receipt (evidence_id, evidence_revision) index). A revision outlives its receipts only
# while another refers to it; the batch that expires the last of them blanks it.
_BLANK = """
UPDATE evidence_revision SET text = '', markdown = NULL, title = NULL, description = NULL, segments = '[]',
                             purged_at = {p1}
WHERE (evidence_id, revision) IN (SELECT done.evidence_id, done.evidence_revision FROM receipt AS done
                                   WHERE done.id IN ({ids}))
  AND purged_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM receipt WHERE receipt.evidence_id = evidence_revision.evidence_id
                  AND receipt.evidence_revision = evidence_revision.revision AND receipt.valid_until > {p1})
"""


async def purge_expired(*, now: datetime | None = None, batch: int = PURGE_BATCH) -> int:
    """Mark receipts past valid_until expired and delete their source content, and the content of
    the evidence revisions no unexpired receipt refers to any more. Returns receipts purged.

    In transactions of `batch` receipts each, the event loop free between them: reads never wait
    on the purge (SQLite's readers do not wait on its writer; PostgreSQL's not on row locks) and
    the writes of settles and new receipts wait for one batch at most.

    A settle that reuses a revision locks its evidence row first (evidence.record_many); on
    PostgreSQL a batch takes the locks of its revisions' evidence rows before it looks for
    references, so it sees the settle's receipt or the settle sees the purge (and writes a new
    revision). SQLite has one writer."""
    now = now or utcnow()
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    due = dialect_params(_DUE.replace("{uuid_text}", "::text" if postgres else ""), postgres)
    purged = 0
    while True:
        rows = await connection.execute_query_dict(due, [sql_time(now, postgres), batch])
        if not rows:
            return purged
        ids = [str(row["id"]) for row in rows]
        listed = ", ".join(param(2 + n, postgres) for n in range(len(ids)))  # after {p1}, the time
        async with in_transaction("default") as transaction:
            if postgres:
                locked = ", ".join(param(1 + n, True) for n in range(len(ids)))
                await transaction.execute_query(_LOCK_SOURCES.replace("{ids}", locked), ids)
            expire = _EXPIRE.replace("{hidden}", _hide_expired(postgres)).replace("{ids}", listed)
            expired, _ = await transaction.execute_query(dialect_params(expire, postgres),
                                                         [sql_time(now, postgres), *ids])
            await transaction.execute_query(dialect_params(_BLANK.replace("{ids}", listed), postgres),
                                            [sql_time(now, postgres), *ids])
            await transaction.execute_query(dialect_params(search_index.DROP_EXPIRED.replace("{ids}", listed), postgres),
                                            [sql_time(now, postgres), *ids])
        purged += int(expired)
        if len(ids) < batch:
            return purged
        await asyncio.sleep(0)
