"""The transaction a receipt's submit and its settle write in: tortoise's `in_transaction`, two hops
to SQLite's thread fewer (tortoise_adapter.LazyBeginSqliteTransaction): four a page of a drain."""

from __future__ import annotations

from tortoise.backends.base.client import TransactionalDBClient, TransactionContext
from tortoise.backends.sqlite.client import SqliteClient
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from evidencekit.server.evidence.store.tortoise_adapter import (
    LazyBeginSqliteTransaction,
    sqlite_transaction,
)


def write_transaction(name: str = "default") -> TransactionContext:
    """A transaction on connection `name` (`async with`); inside one already, a savepoint of it."""
    connection = get_connection(name)
    if isinstance(connection, SqliteClient) and not isinstance(connection, TransactionalDBClient):
        return sqlite_transaction(connection, LazyBeginSqliteTransaction)
    return in_transaction(name)
