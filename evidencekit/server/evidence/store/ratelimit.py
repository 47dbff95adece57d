"""A per-workspace limit on retrieve: at most `limit` new receipts in any 60 seconds (a sliding
window), counted in the database so it holds across processes.

The receipts are the log: a call is charged by the receipt it creates, in the transaction that
inserts it, and counted with the workspace's other receipts created in the 60 seconds before it
(a range scan per state of a claim index, receipt (state, workspace_id, created_at) or (state,
created_at): the last minute's entries, never the workspace's whole history). Over the limit, the transaction is undone, receipt and all. A fixed window per minute let
twice the limit through across a minute's boundary (10 of a limit of 5 within 2 s); a token bucket
would let up to twice the limit through in some 60 s. Here no 60 s ever holds more than `limit`.

PostgreSQL: the count waits on a lock of the workspace's row (FOR NO KEY UPDATE), so two new
receipts of one workspace are counted one after the other, each seeing the other once committed.
SQLite: the receipt's insert already holds the database's one write lock.
"""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta
from functools import cache

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection

from evidencekit.server.evidence.store.models import STATES
from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    sql_time,
    sql_uuid,
)

WINDOW = timedelta(seconds=60)

_LOCK = "SELECT 1 FROM workspace WHERE id = {p1} FOR NO KEY UPDATE"
# Every state named: the index's first column, so each state is one range scan.
_IN_WINDOW = (f"FROM receipt WHERE state IN ({', '.join(repr(state) for state in STATES)}) "
              "AND workspace_id = {p1} AND created_at > {p2}")
_COUNT = f"SELECT count(*) AS n {_IN_WINDOW}"
# The receipt whose leaving the window lets a call in again: the limit-th newest of the others.
_FREED_BY = f"SELECT created_at {_IN_WINDOW} ORDER BY created_at DESC LIMIT 1 OFFSET {{p3}}"


@cache
def _statements(postgres: bool) -> tuple[str, str, str]:
    lock, count, freed_by = (dialect_params(statement, postgres) for statement in (_LOCK, _COUNT, _FREED_BY))
    return lock, count, freed_by


async def admit(workspace_id: uuid.UUID, limit: int, *, now: datetime | None = None,
                connection: BaseDBAsyncClient | None = None) -> int | None:
    """Within the transaction that has just inserted a receipt of `workspace_id` (`connection`):
    None when the workspace's receipts created in the last 60 s, that one included, are at most
    `limit`; else the whole seconds until one more would be (the caller then undoes the insert)."""
    now = now or datetime.now(UTC)
    connection = connection or get_connection("default")
    postgres = is_postgres_connection(connection)
    lock, count, freed_by = _statements(postgres)
    workspace = sql_uuid(workspace_id, postgres)
    if postgres:
        await connection.execute_query(lock, [workspace])
    start = sql_time(now - WINDOW, postgres)
    rows = await connection.execute_query_dict(count, [workspace, start])
    if rows[0]["n"] <= limit:
        return None
    oldest = await connection.execute_query_dict(freed_by, [workspace, start, limit])
    if not oldest:  # cannot happen while the count stands; wait out the window to be safe
        return math.ceil(WINDOW.total_seconds())
    value = oldest[0]["created_at"]
    created: datetime = datetime.fromisoformat(value) if isinstance(value, str) else value  # SQLite: text
    return max(1, math.ceil((created + WINDOW - now).total_seconds()))
