"""A per-workspace limit on retrieve, counted in the database so it holds across processes."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from tortoise.backends.base.client import BaseDBAsyncClient
from tortoise.connection import get_connection

from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    sql_time,
    sql_uuid,
)

# One statement: open the minute's window or count into it, and read the count back.
_TAKE = """
INSERT INTO rate_window (workspace_id, window_start, "count") VALUES ({p1}, {p2}, 1)
ON CONFLICT (workspace_id, window_start) DO UPDATE SET "count" = rate_window."count" + 1
RETURNING "count"
"""


async def take(workspace_id: uuid.UUID, limit_per_minute: int, *, now: datetime | None = None,
               connection: BaseDBAsyncClient | None = None) -> int | None:
    """Count one call; None when within the limit, else the seconds until the window resets.

    Inside a transaction (`connection`), the count is undone with whatever the transaction undoes."""
    now = now or datetime.now(UTC)
    window = now.replace(second=0, microsecond=0)
    connection = connection or get_connection("default")
    postgres = is_postgres_connection(connection)
    rows = await connection.execute_query_dict(
        dialect_params(_TAKE, postgres),
        [sql_uuid(workspace_id, postgres), sql_time(window, postgres)])
    if rows[0]["count"] <= limit_per_minute:
        return None
    return max(1, 60 - now.second)


_FORGET = "DELETE FROM rate_window WHERE window_start < {p1}"


async def forget_old_windows(*, now: datetime | None = None) -> int:
    """Delete the counts of minutes that are over (one row per workspace per busy minute would
    otherwise pile up for ever); the sweep calls it. Returns the rows deleted."""
    now = now or datetime.now(UTC)
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    before = now.replace(second=0, microsecond=0) - timedelta(minutes=1)
    deleted, _ = await connection.execute_query(dialect_params(_FORGET, postgres), [sql_time(before, postgres)])
    return int(deleted)
