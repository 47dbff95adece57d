"""Workers' heartbeats: each running worker writes its beat every few seconds; a lease holder whose
beat has been silent for four of its own intervals is dead (killed, its machine gone), and its
leases are ended so that its receipts are taken up at once rather than after the rest of their
lease.

The lease alone would take up to its whole length (60 s) to free them, and a worker looked for
dead holders only when it started. Three things keep a live worker from being taken for dead:
- beats are written and compared by the database's clock, never two machines' clocks;
- each beat carries its worker's interval, so a worker beating every 10 s is judged by 10 s;
- a watcher judges only holders it could have seen beat: silent for no longer than it has itself
  been beating without a break (`watched`). After a database outage every worker's beats stopped
  together; the first to get through again does not take the others for dead.
A beat that stops for a live worker anyway (its own connection cut) costs at most a second fetch:
its leases are taken over, and it settles only what it still holds (jobs.settle_many).
"""

from __future__ import annotations

from functools import cache

from tortoise.connection import get_connection

from evidencekit.server.evidence.store.sql import (
    dialect_params,
    is_postgres_connection,
    param,
)

SILENT_BEATS = 4  # intervals without a beat that make a holder dead

# Unix time by the database's clock (SQLite: the machine's, which every process of it shares).
_NOW = {True: "extract(epoch from clock_timestamp())", False: "((julianday('now') - 2440587.5) * 86400.0)"}
_BEAT = """
INSERT INTO worker_beat (worker_id, beat_at, every) VALUES ({p1}, {now}, {p2})
ON CONFLICT (worker_id) DO UPDATE SET beat_at = excluded.beat_at, every = excluded.every
"""
# The holders of running receipts whose beat is silent (running receipts are few: the state index),
# among those the watcher would have seen beat.
_SILENT = f"""
SELECT DISTINCT r.lease_owner AS owner FROM receipt AS r JOIN worker_beat AS b ON b.worker_id = r.lease_owner
WHERE r.state = 'running' AND b.beat_at < {{now}} - {SILENT_BEATS} * b.every AND {SILENT_BEATS} * b.every <= {{p1}}
"""


@cache
def _statement(statement: str, postgres: bool) -> str:
    return dialect_params(statement.replace("{now}", _NOW[postgres]), postgres)


async def beat(worker_id: str, every: float) -> None:
    connection = get_connection("default")
    await connection.execute_query(_statement(_BEAT, is_postgres_connection(connection)), [worker_id, every])


async def silent_owners(watched: float) -> list[str]:
    """Holders of running receipts silent for more than SILENT_BEATS of their intervals, of those
    whose SILENT_BEATS intervals fit in `watched` (the seconds the caller has been beating unbroken)."""
    connection = get_connection("default")
    rows = await connection.execute_query_dict(_statement(_SILENT, is_postgres_connection(connection)), [watched])
    return sorted(str(row["owner"]) for row in rows)


async def forget(worker_ids: list[str]) -> None:
    """Remove the beats of workers that stopped (or were found dead)."""
    if not worker_ids:
        return
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    places = ", ".join(param(n, postgres) for n in range(1, len(worker_ids) + 1))
    await connection.execute_query(f"DELETE FROM worker_beat WHERE worker_id IN ({places})", list(worker_ids))
