"""The PostgreSQL connection the batched receipt reads keep.

The reads go one batch at a time per store (turn_batch), so one connection serves them all; taking
it from the pool and giving it back around every batch cost about a fifth of a batch (asyncpg's
pool acquire and release are Python code). It is taken from tortoise's pool at the first batch,
ended when a statement on it fails (the pool opens another in its place), given back when the
store closes (`release`: the pool's close waits for every connection to come back). A kept
connection found dead (PostgreSQL restarted, or ended the session) is replaced once at once: the
reads are plain SELECTs, safe to repeat.
"""

from __future__ import annotations

from typing import Any

import asyncpg
from tortoise.backends.base.client import BaseDBAsyncClient, TransactionalDBClient

_held: dict[BaseDBAsyncClient, Any] = {}
# A session ended under the connection: it is closed, the server said it shuts the session down,
# or it is still taking in that notice (InternalClientError: "another operation is in progress")
_DEAD = (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, ConnectionError, asyncpg.AdminShutdownError,
         asyncpg.CrashShutdownError, asyncpg.InternalClientError)


async def fetch(client: BaseDBAsyncClient, statement: str, *args: Any) -> list[Any]:
    """The rows of `statement` on the connection kept for `client`."""
    pool = getattr(client, "_pool", None)
    if pool is None or isinstance(client, TransactionalDBClient):  # pool not made yet; a transaction's
        async with client.acquire_connection() as connection:
            return list(await connection.fetch(statement, *args))
    try:
        return await _fetch_kept(client, pool, statement, args)
    except _DEAD:
        return await _fetch_kept(client, pool, statement, args)


async def _fetch_kept(client: BaseDBAsyncClient, pool: Any, statement: str, args: tuple[Any, ...]) -> list[Any]:
    connection: Any = _held.get(client)
    if connection is None:
        connection = _held[client] = await pool.acquire()
    try:
        return list(await connection.fetch(statement, *args))
    except BaseException:
        if _held.get(client) is connection:
            del _held[client]
        # Ended, not reset: after a failure or a cancellation mid-statement its protocol state is
        # unknown (the pool handed such a connection straight back, "another operation is in
        # progress"); the pool opens a new one in its place.
        connection.terminate()
        await pool.release(connection)
        raise


async def release(client: BaseDBAsyncClient) -> None:
    """Give the connection kept for `client` back to its pool."""
    connection = _held.pop(client, None)
    if connection is not None:
        await client._pool.release(connection)
