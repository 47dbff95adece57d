"""What the store reads and does of tortoise-orm that tortoise does not publish: the only module that
touches its private names (ConnectionHandler's `_get_storage`, a client's `_pool` and `_lock`, the
migration executor's `_schema_editor`, a SQLite transaction's `_in_transaction`).

- current_client: a context's connection without tortoise's loop check (receipt_reads' status path).
- pool_of: asyncpg's pool behind a client (pg_reads keeps one connection of it).
- records_schema_editor: the editor the migration executor makes for its records' table (migrate).
- NestingSqliteTransaction, sqlite_transaction: a SQLite transaction whose savepoints keep its class
  (migrate's one transaction for every pending migration, sqlite_scripts).
- BeginOnlySqliteTransaction: one whose start is its BEGIN alone (write_transaction).

The migrations themselves use public operations only (RunSQL, RunPython). tortoise-orm is pinned to
one version, 1.1.9 (pyproject.toml), the one tested: tests/server/store/test_tortoise_adapter.py holds
each function to the behaviour the store relies on, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from tortoise.backends.base.client import (
    BaseDBAsyncClient,
    NestedTransactionContext,
    TransactionContext,
)
from tortoise.backends.sqlite.client import (
    SqliteClient,
    SqliteTransactionContext,
    SqliteTransactionWrapper,
)
from tortoise.connection import ConnectionHandler
from tortoise.exceptions import TransactionManagementError
from tortoise.migrations.executor import MigrationExecutor
from tortoise.migrations.schema_editor.base import BaseSchemaEditor


def current_client(connections: ConnectionHandler, alias: str = "default") -> BaseDBAsyncClient:
    """The client `alias` names in this context (a transaction's, inside one), read without tortoise's
    check that it belongs to the running loop: that check makes a getpid() system call each time on
    Python 3.11 (asyncio.get_running_loop). The checked one when the context holds none yet."""
    return connections._get_storage().get(alias) or connections.get(alias)


def pool_of(client: BaseDBAsyncClient) -> Any | None:
    """The driver's pool behind `client` (asyncpg's): None before its first statement made it, and
    for clients without one (SQLite's, a transaction's)."""
    return getattr(client, "_pool", None)


def records_schema_editor(executor: MigrationExecutor) -> BaseSchemaEditor:
    """The schema editor `executor` makes for its connection outside any transaction, as it makes
    one for its records' table (tortoise_migrations)."""
    return executor._schema_editor(atomic=False)


class NestingSqliteTransaction(SqliteTransactionWrapper):
    """A SQLite transaction whose nested transactions (savepoints) are of its own class, so what a
    subclass changes holds inside them too. A subclass whose transactions run migrations must live in
    a module with "sqlite" in its name: tortoise's executor picks its SQLite schema editor by it."""

    def _in_transaction(self) -> TransactionContext:
        return NestedTransactionContext(type(self)(self))


def sqlite_transaction(connection: SqliteClient, kind: type[NestingSqliteTransaction]) -> TransactionContext:
    """A transaction on `connection` (`async with`), run through `kind`: what the connection's own
    `in_transaction` does with tortoise's class, holding the connection's lock while it is open."""
    return SqliteTransactionContext(kind(connection), connection._lock)


class BeginOnlySqliteTransaction(NestingSqliteTransaction):
    """tortoise's SQLite transaction commits before its BEGIN, a hop to aiosqlite's thread that
    finds nothing to commit: the store's connection runs in autocommit (isolation_level None), where
    no transaction is open unless one's end never ran. That commit is sent only then, as tortoise
    would; else the BEGIN alone."""

    async def begin(self) -> None:
        if self._connection.in_transaction:
            await super().begin()
            return
        try:
            await self._connection.execute("BEGIN")
        except sqlite3.OperationalError as exc:
            raise TransactionManagementError(exc) from exc
