"""Apply the committed migrations so that a crash cannot leave an upgrade half done.

tortoise's `migrate()` applies each migration in a transaction and records it only after that
commits; a crash in between left a schema change without its record, and every later start failed
on it ("index ... already exists"). Here all pending migrations and their records are one
transaction (the executor's own per-migration transactions become savepoints). PostgreSQL's DDL is
transactional as is. On SQLite tortoise runs DDL through `executescript`, which commits whatever is
open first; inside this transaction each script is split into statements (at the semicolons
`sqlite3.complete_statement` says end one) and run one by one instead (sqlite_scripts). A future
migration that makes SQLite rebuild a table would need foreign keys off, which SQLite ignores inside
a transaction: check such a migration on a copy first.
"""

from __future__ import annotations

from typing import Any

from tortoise import Tortoise
from tortoise.backends.sqlite.client import SqliteClient
from tortoise.connection import get_connection
from tortoise.migrations.executor import MigrationExecutor
from tortoise.transactions import in_transaction

from evidencekit.server.evidence.store.sqlite_scripts import ScriptsInTransaction
from evidencekit.server.evidence.store.tortoise_adapter import (
    records_schema_editor,
    sqlite_transaction,
)


def _one_transaction(connection: Any) -> Any:
    if isinstance(connection, SqliteClient):
        return sqlite_transaction(connection, ScriptsInTransaction)
    return in_transaction(connection.connection_name)


async def migrate(config: dict[str, Any]) -> None:
    """tortoise's `migrate()` for our one app and connection, in one transaction."""
    await Tortoise.init(config=config, init_connections=False)
    connection = get_connection("default")
    # The records' table first, outside: reading it while it is missing would abort a PostgreSQL
    # transaction (the executor reads it before it creates it).
    outside = MigrationExecutor(connection, config["apps"])
    await outside.recorder.ensure_schema(records_schema_editor(outside))
    async with _one_transaction(connection) as transaction:
        await MigrationExecutor(transaction, config["apps"]).migrate()
    await connection.close()
