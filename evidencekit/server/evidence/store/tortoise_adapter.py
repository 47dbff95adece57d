"""What the store reads and does of tortoise-orm that tortoise does not publish: the only module that
touches its private names (ConnectionHandler's `_get_storage`, a client's `_pool` and `_lock`, the
migration executor's `_schema_editor`, a SQLite transaction's `_in_transaction`), and of aiosqlite,
tortoise's SQLite driver (a connection's `_conn` and `_execute`: aiosqlite is pinned to 0.22.x, and
tests/server/store/test_sqlite_hops.py passed on 0.22.0 and 0.22.1).

- current_client: a context's connection without tortoise's loop check (receipt_reads' status path).
- pool_of: asyncpg's pool behind a client (pg_reads keeps one connection of it).
- records_schema_editor: the editor the migration executor makes for its records' table (migrate).
- NestingSqliteTransaction, sqlite_transaction: a SQLite transaction whose savepoints keep its class
  (migrate's one transaction for every pending migration, sqlite_scripts).
- LazyBeginSqliteTransaction: one whose BEGIN goes with its first statement (write_transaction).

The migrations themselves use public operations only (RunSQL, RunPython). tortoise-orm is pinned to
one version, 1.1.9 (pyproject.toml), the one tested: tests/server/store/test_tortoise_adapter.py holds
each function to the behaviour the store relies on, on SQLite and PostgreSQL.
"""

from __future__ import annotations

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


class _BeginWithFirstStatement:
    """aiosqlite's connection, for one transaction whose BEGIN is yet to be sent: it goes in one hop
    with the first statement (SQLite's deferred BEGIN takes no lock before one anyway), and with
    none sent there is nothing to commit or roll back."""

    def __init__(self, connection: Any) -> None:
        self.connection, self.pending = connection, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)

    async def _begun(self) -> None:
        if self.pending:
            self.pending = False
            await self.connection.execute("BEGIN")

    async def execute_fetchall(self, sql: str, parameters: Any = None) -> Any:
        if not self.pending:
            return await self.connection.execute_fetchall(sql, parameters)
        self.pending = False
        raw = self.connection._conn

        def begin_and_run() -> Any:
            raw.execute("BEGIN")
            return raw.execute(sql, [] if parameters is None else parameters).fetchall()

        return await self.connection._execute(begin_and_run)

    async def execute(self, sql: str, parameters: Any = None) -> Any:
        await self._begun()
        return await self.connection.execute(sql, parameters)

    async def execute_insert(self, sql: str, parameters: Any = None) -> Any:
        await self._begun()
        return await self.connection.execute_insert(sql, parameters)

    async def executemany(self, sql: str, parameters: Any) -> Any:
        await self._begun()
        return await self.connection.executemany(sql, parameters)

    async def executescript(self, sql_script: str) -> Any:
        await self._begun()
        return await self.connection.executescript(sql_script)

    async def commit(self) -> None:
        if not self.pending:
            await self.connection.commit()

    async def rollback(self) -> None:
        if not self.pending:
            await self.connection.rollback()


class LazyBeginSqliteTransaction(NestingSqliteTransaction):
    """tortoise's SQLite transaction sends a commit before its BEGIN, and the BEGIN on its own: two
    hops to aiosqlite's thread before its first statement. The commit finds nothing to commit (the
    store's connection runs in autocommit, isolation_level None: no transaction is open unless
    one's end never ran, and then it is sent, as tortoise would); the BEGIN goes with the first
    statement (_BeginWithFirstStatement)."""

    async def begin(self) -> None:
        if self._connection.in_transaction:
            await super().begin()
            return
        self._connection = _BeginWithFirstStatement(self._connection)  # type: ignore[assignment]
