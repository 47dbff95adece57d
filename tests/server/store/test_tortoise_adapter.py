"""evidencekit.server.evidence.store.tortoise_adapter reads and uses tortoise's private names; these
tests hold each function to what the store relies on, on SQLite and PostgreSQL (tortoise-orm 1.1.9,
the one version the pin allows). Event-driven: no test waits for time to pass."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tortoise import Tortoise
from tortoise.connection import get_connection
from tortoise.context import TortoiseContext
from tortoise.migrations.executor import MigrationExecutor
from tortoise.transactions import in_transaction

from evidencekit.server.evidence.store.db import open_store, tortoise_config
from evidencekit.server.evidence.store.sqlite_scripts import ScriptsInTransaction
from evidencekit.server.evidence.store.tortoise_adapter import (
    NestingSqliteTransaction,
    current_client,
    pool_of,
    records_schema_editor,
    sqlite_transaction,
)

pytestmark = pytest.mark.anyio


async def test_current_client_is_the_contexts_connection_or_its_open_transactions(database_url: str) -> None:
    async with open_store(database_url) as context:
        outside = current_client(context.connections)
        assert outside is get_connection("default")
        async with in_transaction() as transaction:
            assert current_client(context.connections) is transaction
            assert current_client(context.connections) is not outside
        assert current_client(context.connections) is outside


async def test_current_client_does_not_check_the_clients_loop(database_url: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The status path's saving: no loop check per read (tortoise's `get` makes one, and on a client
    it finds on another loop warns and reconnects)."""
    async with open_store(database_url) as context:
        client = current_client(context.connections)
        with monkeypatch.context() as patched:
            patched.setattr(client, "_check_loop", lambda: False)  # as if made on another loop
            assert current_client(context.connections) is client  # no warning (an error here), no new client


async def test_pool_of_a_postgres_client_is_the_pool_it_reads_from(postgres_url: str) -> None:
    async with open_store(postgres_url):
        client = get_connection("default")
        await client.execute_query("SELECT 1")  # the pool is made by the first statement
        pool = pool_of(client)
        assert pool is not None
        idle = pool.get_idle_size()
        connection = await pool.acquire()
        try:
            assert pool.get_idle_size() == idle - 1
            assert await connection.fetchval("SELECT current_database()") == postgres_url.rsplit("/", 1)[1]
        finally:
            await pool.release(connection)
        assert pool.get_idle_size() == idle


async def test_a_sqlite_client_has_no_pool(tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}"):
        assert pool_of(get_connection("default")) is None


async def test_the_records_schema_editor_is_the_dialects_and_makes_the_records_table(database_url: str) -> None:
    config = tortoise_config(database_url)
    async with TortoiseContext():
        await Tortoise.init(config=config, init_connections=False)
        connection = get_connection("default")
        executor = MigrationExecutor(connection, config["apps"])
        editor = records_schema_editor(executor)
        dialect = "sqlite" if database_url.startswith("sqlite") else "postgres"
        assert dialect == editor.DIALECT
        assert not editor.collect_sql and not editor.atomic  # it runs, outside any transaction
        await executor.recorder.ensure_schema(editor)
        _, rows = await connection.execute_query("SELECT count(*) AS n FROM tortoise_migrations")
        assert rows[0]["n"] == 0
        await connection.close()


class Marked(NestingSqliteTransaction):
    pass


async def test_a_sqlite_transaction_keeps_its_class_in_savepoints_and_undoes_its_ddl(tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}"):
        connection = get_connection("default")
        with pytest.raises(RuntimeError):
            async with sqlite_transaction(connection, Marked) as outer:
                assert isinstance(outer, Marked) and get_connection("default") is outer
                await outer.execute_query("CREATE TABLE made_inside (a INTEGER)")
                async with in_transaction() as inner:  # a savepoint, of the same class
                    assert isinstance(inner, Marked) and inner is not outer
                    await inner.execute_query("INSERT INTO made_inside VALUES (1)")
                raise RuntimeError("undo")
        _, rows = await connection.execute_query(
            "SELECT count(*) AS n FROM sqlite_master WHERE name = 'made_inside'")
        assert rows[0]["n"] == 0  # the whole transaction was undone, the DDL with it


async def test_a_sqlite_transaction_holds_the_connection_until_it_ends(tmp_path: Path) -> None:
    """Another transaction on the connection waits for it, as for tortoise's own."""
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}"):
        connection = get_connection("default")
        entered, start = asyncio.Event(), asyncio.Event()

        async def other() -> None:
            await start.wait()
            async with in_transaction():
                entered.set()

        waiting = asyncio.create_task(other())  # made outside: its context holds the connection itself
        async with sqlite_transaction(connection, Marked):
            start.set()
            for _ in range(20):  # turns of the loop in which it could have entered
                await asyncio.sleep(0)
            assert not entered.is_set()
        await waiting
        assert entered.is_set()


async def test_migrations_in_a_scripts_transaction_get_the_sqlite_schema_editor(tmp_path: Path) -> None:
    """tortoise's executor picks its schema editor by the client class's module name: sqlite_scripts'
    class (in a module so named) gets the SQLite one, inside the one transaction migrate opens."""
    url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    config = tortoise_config(url)
    async with TortoiseContext():
        await Tortoise.init(config=config, init_connections=False)
        connection = get_connection("default")
        async with sqlite_transaction(connection, ScriptsInTransaction) as transaction:
            assert records_schema_editor(MigrationExecutor(transaction, config["apps"])).DIALECT == "sqlite"
        await connection.close()
