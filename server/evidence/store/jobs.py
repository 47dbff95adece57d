"""The job side of a receipt: claim with a lease, renew it, settle or release while holding it.

A claim is one UPDATE ... RETURNING that takes the oldest pending receipt, or a running one
whose lease expired (its worker died), as long as the receipt itself has not expired (the sweeper
marks those). PostgreSQL skips rows other workers hold (FOR UPDATE SKIP LOCKED); SQLite has one
writer at a time, so the statement alone is enough.
Settling succeeds only while the worker still holds the lease.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from tortoise.connection import get_connection
from tortoise.expressions import F
from tortoise.transactions import in_transaction

from evidencekit.server.evidence.store import evidence as evidence_store
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    sql_time,
    sql_uuid,
)

_CLAIM = """
UPDATE receipt SET state = 'running', lease_owner = {p1}, lease_expires_at = {p2}, attempts = attempts + 1
WHERE id = (
    SELECT id FROM receipt
    WHERE (state = 'pending' OR (state = 'running' AND lease_expires_at < {p3})) AND attempts < {p4}
          AND valid_until > {p3}{fair}
    ORDER BY created_at{lock} LIMIT 1
)
RETURNING *
"""
# Fairness between workspaces: first the oldest receipt of a workspace with nothing running (the
# running receipts are few, and found by the state index), so one workspace's backlog of slow URLs
# delays another's receipt by one slot at most; only then the oldest of all.
_IDLE_WORKSPACE = """
          AND workspace_id NOT IN (SELECT workspace_id FROM receipt WHERE state = 'running' AND lease_expires_at >= {p3})"""


class LeaseLost(Exception):
    """The worker no longer holds the receipt (its lease expired and another worker took it)."""


@cache
def _claim_statement(postgres: bool, fair: bool) -> str:
    statement = _CLAIM.replace("{fair}", _IDLE_WORKSPACE if fair else "")
    return dialect_params(statement.replace("{lock}", " FOR UPDATE SKIP LOCKED" if postgres else ""), postgres)


async def claim(worker_id: str, lease: timedelta, *, max_attempts: int,
                now: datetime | None = None) -> Receipt | None:
    now = now or datetime.now(UTC)
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    values = [worker_id, sql_time(now + lease, postgres), sql_time(now, postgres), max_attempts]
    rows = await connection.execute_query_dict(_claim_statement(postgres, fair=True), values)
    if not rows:  # every workspace with work has some running: the oldest of all
        rows = await connection.execute_query_dict(_claim_statement(postgres, fair=False), values)
    if not rows:
        return None
    return Receipt._init_from_db(**rows[0])  # the row as tortoise loads any other: no second query


async def renew(receipt_id: uuid.UUID, worker_id: str, lease: timedelta) -> bool:
    until = datetime.now(UTC) + lease
    changed = await Receipt.filter(id=receipt_id, lease_owner=worker_id, state="running").update(
        lease_expires_at=until)
    return changed == 1


async def release(receipt_id: uuid.UUID, worker_id: str) -> bool:
    """Give a claimed receipt back untouched (graceful shutdown); the attempt does not count."""
    changed = await Receipt.filter(id=receipt_id, lease_owner=worker_id, state="running").update(
        state="pending", lease_owner=None, lease_expires_at=None, attempts=F("attempts") - 1)
    return changed == 1


_SETTLE = """
UPDATE receipt SET state = 'completed', settled_at = {p1}, result = {p2}, evidence_id = {p3},
                   evidence_revision = {p4}, lease_owner = NULL, lease_expires_at = NULL
WHERE id = {p5} AND lease_owner = {p6} AND state = 'running'
RETURNING id
"""


async def settle(receipt: Receipt, worker_id: str, result: dict[str, Any],
                 content: evidence_store.Content | None, *, now: datetime | None = None) -> None:
    """Store result, evidence and state in one transaction, only while holding the lease."""
    now = now or datetime.now(UTC)
    async with in_transaction() as connection:
        postgres = is_postgres_connection(connection)
        evidence_id, revision = None, None
        if content is not None:  # first statement a write: SQLite takes its write lock before any read
            evidence_id, revision = await evidence_store.record(
                receipt.workspace_id, receipt.url, receipt.kind, receipt.language, content)
        settled = await connection.execute_query_dict(dialect_params(_SETTLE, postgres), [
            sql_time(now, postgres), json.dumps(result),
            sql_uuid(evidence_id, postgres), revision, sql_uuid(receipt.id, postgres), worker_id])
        if not settled:  # rolls the evidence back with it
            raise LeaseLost(f"receipt {receipt.id} is no longer held by {worker_id}")


async def settle_abandoned(max_attempts: int, *, now: datetime | None = None) -> int:
    """Receipts whose every attempt lost its lease cannot be confirmed either way: `unconfirmed`."""
    now = now or datetime.now(UTC)
    return await Receipt.filter(state="running", lease_expires_at__lt=now, attempts__gte=max_attempts).update(
        state="unconfirmed", settled_at=now, lease_owner=None, lease_expires_at=None)


async def running_owners(prefix: str) -> list[str]:
    """The lease holders of running receipts whose ids start with `prefix` (one machine's boot)."""
    rows = await Receipt.filter(state="running", lease_owner__startswith=prefix).distinct().values_list(
        "lease_owner", flat=True)
    return sorted(str(owner) for owner in rows if owner)


async def expire_leases(owners: list[str], now: datetime | None = None) -> int:
    """End the leases of holders known to be dead: their receipts are claimable at once, as if the
    leases had run out (the attempt they spent still counts)."""
    if not owners:
        return 0
    now = now or datetime.now(UTC)
    return await Receipt.filter(state="running", lease_owner__in=owners).update(lease_expires_at=now)
