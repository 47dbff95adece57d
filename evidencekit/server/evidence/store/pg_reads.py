"""The PostgreSQL connection the batched receipt reads keep.

The reads go one batch at a time per store (turn_batch), so one connection serves them all; taking
it from the pool and giving it back around every batch cost about a fifth of a batch (asyncpg's
pool acquire and release are Python code). It is taken from tortoise's pool at the first batch,
ended when a statement on it fails (the pool opens another in its place), given back when the
store closes (`release`: the pool's close waits for every connection to come back). A kept
connection found dead (PostgreSQL restarted, or ended the session) is replaced once at once: the
reads are plain SELECTs, safe to repeat.

Every statement has a deadline: a kept connection never idles in the pool, so the pool's idle
expiry does not cover it, and one dropped silently by the network (no reset) would otherwise hold
every status read of the store until the kernel gives up on it, minutes later.
"""

from __future__ import annotations

import weakref
from typing import Any

try:
    import asyncpg
except ImportError:  # the `postgres` extra is not installed: these reads are only used with PostgreSQL
    asyncpg = None  # never reached without PostgreSQL (db.open_store checks)
    _DRIVER_DEAD: tuple[type[BaseException], ...] = ()
    _ARGUMENTS: tuple[type[BaseException], ...] = ()
else:
    _ARGUMENTS = (asyncpg.DataError,)
    _DRIVER_DEAD = (asyncpg.PostgresConnectionError, asyncpg.InterfaceError, asyncpg.AdminShutdownError,
                    asyncpg.CrashShutdownError, asyncpg.InternalClientError)
from tortoise.backends.base.client import BaseDBAsyncClient, TransactionalDBClient

from evidencekit.server.evidence.store.tortoise_adapter import pool_of

STATEMENT_SECONDS = 10.0  # a batch of reads takes milliseconds; past this the connection is taken as dead

_held: dict[BaseDBAsyncClient, Any] = {}
_busy: set[BaseDBAsyncClient] = set()  # a statement is out on the kept connection
_closing: weakref.WeakSet[BaseDBAsyncClient] = weakref.WeakSet()
# A session ended under the connection: it is closed, the server said it shuts the session down,
# or it is still taking in that notice (InternalClientError: "another operation is in progress"),
# or it gave no answer in time
_DEAD: tuple[type[BaseException], ...] = (*_DRIVER_DEAD, ConnectionError, TimeoutError)


async def fetch(client: BaseDBAsyncClient, statement: str, *args: Any) -> list[Any]:
    """The rows of `statement` on the connection kept for `client`."""
    pool = pool_of(client)
    if (pool is None or isinstance(client, TransactionalDBClient)  # pool not made yet; a transaction's
            or client in _busy or client in _closing):  # not one batch at a time; the store closing
        async with client.acquire_connection() as connection:
            return list(await connection.fetch(statement, *args, timeout=STATEMENT_SECONDS))
    try:
        return await _fetch_kept(client, pool, statement, args)
    except _ARGUMENTS:  # the arguments, not the connection (an InterfaceError too)
        raise
    except _DEAD:
        return await _fetch_kept(client, pool, statement, args)


async def _fetch_kept(client: BaseDBAsyncClient, pool: Any, statement: str, args: tuple[Any, ...]) -> list[Any]:
    _busy.add(client)
    try:
        connection: Any = _held.get(client)
        if connection is None:
            connection = _held[client] = await pool.acquire()
        try:
            rows = await connection.fetch(statement, *args, timeout=STATEMENT_SECONDS)
        except BaseException:
            _drop(client, connection)
            # Ended, not reset: after a failure or a cancellation mid-statement its protocol state
            # is unknown (the pool handed such a connection straight back, "another operation is
            # in progress"); the pool opens a new one in its place.
            connection.terminate()
            await pool.release(connection)
            raise
    finally:
        _busy.discard(client)
    if client in _closing:  # the store closed while this statement was out: `release` left it here
        _drop(client, connection)
        await pool.release(connection)
    return list(rows)


def _drop(client: BaseDBAsyncClient, connection: Any) -> None:
    if _held.get(client) is connection:
        del _held[client]


async def release(client: BaseDBAsyncClient) -> None:
    """Give the connection kept for `client` back to its pool: now, or when the statement out on
    it is answered. Reads on `client` from here on take a pooled connection each."""
    _closing.add(client)
    if client in _busy:
        return
    connection = _held.pop(client, None)
    pool = pool_of(client)
    if connection is not None and pool is not None:  # a connection is kept only where its pool is
        await pool.release(connection)
