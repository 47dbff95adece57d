"""Workers' heartbeats: each running worker writes its beat every few seconds; a lease holder whose
beat is older than `dead_after` is dead (killed, its machine gone), and its leases are ended so that
its receipts are taken up at once rather than after the rest of their lease.

The lease alone would take up to its whole length (60 s) to free them, and a worker looked for
dead holders only when it started. A beat that stops for a live worker (its database connection
cut, say) costs at most a duplicate fetch: its leases are taken over, and it settles only what it
still holds (jobs.settle_many).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tortoise.connection import get_connection

from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    param,
    sql_time,
)

_BEAT = """
INSERT INTO worker_beat (worker_id, beat_at) VALUES ({p1}, {p2})
ON CONFLICT (worker_id) DO UPDATE SET beat_at = excluded.beat_at
"""
# The holders of running receipts whose beat has stopped (running receipts are few: the state index).
_SILENT = """
SELECT DISTINCT r.lease_owner AS owner FROM receipt AS r JOIN worker_beat AS b ON b.worker_id = r.lease_owner
WHERE r.state = 'running' AND b.beat_at < {p1}
"""


async def beat(worker_id: str, *, now: datetime | None = None) -> None:
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    await connection.execute_query(dialect_params(_BEAT, postgres),
                                   [worker_id, sql_time(now or datetime.now(UTC), postgres)])


async def silent_owners(dead_after: timedelta, *, now: datetime | None = None) -> list[str]:
    """Holders of running receipts whose last beat is older than `dead_after`."""
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    rows = await connection.execute_query_dict(dialect_params(_SILENT, postgres),
                                               [sql_time((now or datetime.now(UTC)) - dead_after, postgres)])
    return sorted(str(row["owner"]) for row in rows)


async def forget(worker_ids: list[str]) -> None:
    """Remove the beats of workers that stopped (or were found dead)."""
    if not worker_ids:
        return
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    places = ", ".join(param(n, postgres) for n in range(1, len(worker_ids) + 1))
    await connection.execute_query(f"DELETE FROM worker_beat WHERE worker_id IN ({places})", list(worker_ids))
