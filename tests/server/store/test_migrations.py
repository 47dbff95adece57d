"""The committed migrations describe the models exactly (the store's equivalent of `codegen check`)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from tortoise.connection import get_connection
from tortoise.context import TortoiseContext
from tortoise.migrations.autodetector import MigrationAutodetector

from evidencekit.server.evidence.store.db import open_store, sqlite_path, tortoise_config


@pytest.mark.anyio
async def test_models_need_no_new_migration(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tortoise_config(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    async with TortoiseContext() as context:
        await context.init(config=config, init_connections=False)
        pending = await MigrationAutodetector(context.apps, config["apps"]).changes()
    assert pending == [], "models changed: run scripts/makemigrations and commit the migration"


@pytest.mark.anyio
@pytest.mark.parametrize(("made_at", "dies_after"), [("0002_user_oauth_subject", "0003_receipt_evidence_index"),
                                                     (None, "0001_initial")])
async def test_a_crash_between_a_migration_and_its_record_is_redone_on_the_next_start(
        database_url: str, monkeypatch: pytest.MonkeyPatch, made_at: str | None, dies_after: str) -> None:
    """Upgrading a store made at 0002 (or creating one): the process dies right after a migration's
    schema change, before tortoise records it. The next start must apply it again cleanly, not fail
    on "already exists"."""
    from tortoise.migrations.api import migrate as tortoise_migrate
    from tortoise.migrations.recorder import MigrationRecorder

    from evidencekit.server.evidence.store.db import APP, open_store

    if made_at is not None:
        async with TortoiseContext():
            await tortoise_migrate(config=tortoise_config(database_url), target=f"{APP}.{made_at}")
    record_applied = MigrationRecorder.record_applied

    async def dies_before_recording(self: MigrationRecorder, app: str, name: str) -> None:
        if name == dies_after:
            raise SystemExit("killed")  # what kill -9 leaves: nothing after this point runs
        await record_applied(self, app, name)

    monkeypatch.setattr(MigrationRecorder, "record_applied", dies_before_recording)
    with pytest.raises(SystemExit):
        async with open_store(database_url):
            pass
    monkeypatch.setattr(MigrationRecorder, "record_applied", record_applied)
    async with open_store(database_url):
        from tortoise.connection import get_connection

        _, rows = await get_connection("default").execute_query(
            f"SELECT name FROM tortoise_migrations WHERE name = '{dies_after}'")
    assert len(rows) == 1
    if database_url.startswith("sqlite"):  # the copy kept during the upgrade is gone once it is recorded
        assert not list(Path(sqlite_path(database_url)).parent.glob("*.pre-upgrade*"))


def test_a_script_splits_where_sqlite_says_a_statement_ends() -> None:
    from evidencekit.server.evidence.store.sqlite_scripts import statements

    script = "CREATE TABLE t (a TEXT DEFAULT 'x;y');\nCREATE INDEX i ON t (a);\n-- done\n"
    assert list(statements(script)) == ["CREATE TABLE t (a TEXT DEFAULT 'x;y');", "CREATE INDEX i ON t (a);"]


@pytest.mark.anyio
async def test_the_hand_written_migrations_run_the_sql_they_were_written_with(database_url: str) -> None:
    """0005 and 0006 run their own SQL (through tortoise's public RunSQL): on SQLite, 0005 drops the
    three indexes by name and 0006 does nothing; on PostgreSQL 0006 also retypes the result column,
    and back. What tortoise's sqlmigrate collects is what a store that migrates runs."""
    from tortoise.migrations.api import sqlmigrate

    from evidencekit.server.evidence.store.db import APP

    async def sql(name: str, backward: bool = False) -> list[str]:
        async with TortoiseContext():
            collected = await sqlmigrate(config=tortoise_config(database_url), app_label=APP,
                                         migration_name=name, backward=backward)
        return [statement.strip() for statement in collected if not statement.lstrip().startswith("--")]

    postgres = not database_url.startswith("sqlite")
    assert await sql("0005_drop_single_column_receipt_indexes") == [
        f'DROP INDEX IF EXISTS "{index}"'
        for index in ("idx_receipt_state_54144e", "idx_receipt_valid_u_e384bc", "idx_receipt_lease_e_7f4ebc")]
    assert await sql("0006_receipt_result_json") == ([TO_JSON.strip()] if postgres else [])
    assert await sql("0006_receipt_result_json", backward=True) == (
        ["ALTER TABLE receipt ALTER COLUMN result TYPE jsonb USING result::jsonb"] if postgres else [])


TO_JSON = """
DO $$ BEGIN
  EXECUTE 'ALTER TABLE receipt ALTER COLUMN result TYPE json USING result::json, '
          'ALTER COLUMN result SET COMPRESSION lz4';
EXCEPTION WHEN OTHERS THEN  -- no COMPRESSION clause before 14, or no lz4 in this build
  ALTER TABLE receipt ALTER COLUMN result TYPE json USING result::json;
END $$
"""


async def _indexes(url: str) -> set[tuple[str, tuple[str, ...], bool]]:
    """(table, columns, unique) of every index of the database, whatever it is named."""
    from tortoise.connection import get_connection

    connection = get_connection("default")
    if url.startswith("sqlite"):
        found = set()
        tables = [row["name"] for row in await connection.execute_query_dict(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        for table in tables:
            for index in await connection.execute_query_dict(f'PRAGMA index_list("{table}")'):
                columns = [row["name"] for row in await connection.execute_query_dict(
                    f'PRAGMA index_info("{index["name"]}")')]
                found.add((table, tuple(columns), bool(index["unique"])))
        return found
    rows = await connection.execute_query_dict(
        "SELECT t.relname AS table_name, i.indisunique AS is_unique, array_agg(a.attname ORDER BY k.n) AS columns "
        "FROM pg_index AS i JOIN pg_class AS t ON t.oid = i.indrelid "
        "JOIN pg_namespace AS s ON s.oid = t.relnamespace AND s.nspname = 'public' "
        "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) "
        "JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = k.attnum "
        "GROUP BY t.relname, i.indexrelid, i.indisunique")
    return {(row["table_name"], tuple(row["columns"]), bool(row["is_unique"])) for row in rows}


@pytest.mark.anyio
async def test_the_migrated_schema_has_the_indexes_and_constraints_the_models_declare(
        database_url: str, tmp_path: Path) -> None:
    """What the migrations build equals what tortoise builds from the models (an AlterField that
    rebuilt a SQLite table once dropped its unique constraints)."""
    from tortoise import Tortoise

    from evidencekit.server.evidence.store.db import open_store
    from tests.server.store.conftest import pg_database

    async with open_store(database_url):
        migrated = {index for index in await _indexes(database_url) if index[0] != "tortoise_migrations"}

    async def generated(url: str) -> set[tuple[str, tuple[str, ...], bool]]:
        async with TortoiseContext():
            await Tortoise.init(config=tortoise_config(url))
            await Tortoise.generate_schemas()
            return await _indexes(url)

    if database_url.startswith("sqlite"):
        expected = await generated(f"sqlite:///{tmp_path / 'generated.sqlite3'}")
    else:
        async with pg_database() as other:
            expected = await generated(other)
    # search_documents' full-text index, which tortoise cannot declare (store/search_index.py)
    full_text = {("document_search", ("search",), False), ("document_search", ("search_exact",), False),
                 ("document_search_fts_config", ("k",), True),
                 ("document_search_fts_idx", ("segid", "term"), True), ("document_words", ("evidence_id",), True)}
    assert migrated - full_text == expected
    assert ("receipt", ("workspace_id", "mutation_id"), True) in migrated
    assert migrated & full_text  # the dialect's own


@pytest.mark.anyio
async def test_postgresql_results_move_to_json_text_unchanged(postgres_url: str) -> None:
    """0006 on a store with receipts: every stored result reads back as it was (a page of text in
    several scripts, escapes, null), the column now keeps JSON as written, compressed with lz4
    where the server has it."""
    import asyncpg
    from tortoise.migrations.api import migrate as tortoise_migrate

    from evidencekit.server.evidence.store import receipt_reads
    from evidencekit.server.evidence.store.db import open_store
    from evidencekit.server.evidence.store.models import Receipt
    from tests.server.store.test_receipts import RESULT, WORKSPACE

    async with TortoiseContext():
        await tortoise_migrate(config=tortoise_config(postgres_url),
                               target="models.0005_drop_single_column_receipt_indexes")
    page = {**RESULT, "text": "שלום עולם · 你好，世界 · \"quoted\" \\ tab\t " * 300, "title": None}
    made = {uuid.uuid4(): page, uuid.uuid4(): None}
    connection = await asyncpg.connect(postgres_url)
    try:
        for mutation_id, result in made.items():
            await connection.execute(
                "INSERT INTO receipt (id, workspace_id, mutation_id, input_hash, url, kind, state, created_at, "
                "valid_until, result, attempts) VALUES ($1, $2, $3, 'h', 'https://example.com/a', 'url_text', "
                "'completed', now(), now() + interval '1 day', $4::jsonb, 0)",
                uuid.uuid4(), WORKSPACE, mutation_id, None if result is None else json.dumps(result))
        lz4 = await _has_lz4(connection)
    finally:
        await connection.close()

    async with open_store(postgres_url):
        for mutation_id, result in made.items():
            view = await receipt_reads.find_view(WORKSPACE, mutation_id)
            assert view is not None and view.result == result
            assert (await Receipt.get(mutation_id=mutation_id)).result == result
    connection = await asyncpg.connect(postgres_url)
    try:
        kind, compression = await connection.fetchrow(
            "SELECT format_type(atttypid, atttypmod), attcompression::text FROM pg_attribute "
            "WHERE attrelid = 'receipt'::regclass AND attname = 'result'")
    finally:
        await connection.close()
    assert kind == "json"
    assert compression == ("l" if lz4 else "")


@pytest.mark.anyio
async def test_postgresql_exact_words_are_taken_from_the_full_index_as_a_settle_writes_them(postgres_url: str) -> None:
    """0018 on a store indexed before it: each row's words alone (and its scope and recency
    bucket), split off the tsvector of words and forms, are what keep() writes for the same page
    since; the exact stage of a search finds the page by them and says so."""
    from evidencekit.server.evidence.search_documents import search_documents
    from evidencekit.server.evidence.store.models import Workspace
    from tests.server.store.test_service import principal_in
    from tests.server.store.test_source_renames import settle_as_before

    async with open_store(postgres_url):
        lab = await Workspace.create(name="lab")
        for number, text in enumerate(("Die Windkraftanlagen am Deich", "Zugvögel über dem Watt", "城市交通 בירושלים")):
            await settle_as_before(lab, f"https://example.com/{number}", text, text)
        connection = get_connection("default")
        written = await connection.execute_query_dict(
            "SELECT id, search_exact::text AS exact FROM document_search ORDER BY id")
        await connection.execute_script(
            "DROP TRIGGER document_search_recency ON document_search; DROP INDEX document_search_exact_words; "
            "ALTER TABLE document_search DROP COLUMN search_exact; "
            "DELETE FROM tortoise_migrations WHERE name >= '0018_search_exact'")  # and those after it
    async with open_store(postgres_url):  # the upgrade
        connection = get_connection("default")
        assert await connection.execute_query_dict(
            "SELECT id, search_exact::text AS exact FROM document_search ORDER BY id") == written
        assert len(written) == 3 and all("ws_" in row["exact"] and "'rb_0'" in row["exact"] and "'0f" not in row["exact"]
                                         for row in written)
        reader = await principal_in(await Workspace.get(id=lab.id), "reader", "viewer")
        [hit] = (await search_documents(reader, "windkraftanlagen"))["results"]
        assert hit["match"] == "exact"


_WIDE = {"evidence_revision": ("text", "markdown", "segments"), "document_words": ("words",)}


@pytest.mark.anyio
async def test_postgresql_compresses_a_settled_pages_text_with_lz4_after_0019(postgres_url: str) -> None:
    """0019 on a store whose pages were compressed with pglz: the pages stored before are served and
    found as they were, and a page settled since keeps its text, markdown, segments and
    index words compressed with lz4 where the server has it (pglz took ~4 ms of the database's CPU a
    200 KB page)."""
    import asyncpg

    from evidencekit.server.evidence.documents import get_documents
    from evidencekit.server.evidence.search_documents import search_documents
    from evidencekit.server.evidence.store.models import Workspace
    from tests.server.store.test_service import principal_in
    from tests.server.store.test_source_renames import settle_as_before

    text = " ".join(f"Satz {n}: das Torfmoos im Hochmoor wächst einen Millimeter im Jahr." for n in range(300))
    segments = [{"kind": "paragraph", "text": f"Absatz {n} über das Hochmoor und seine Moose."} for n in range(80)]
    async with open_store(postgres_url):
        await get_connection("default").execute_script(  # the store as it was before 0019
            ";".join(f"ALTER TABLE {table} " + ", ".join(f"ALTER COLUMN {column} SET COMPRESSION default"
                                                         for column in columns) for table, columns in _WIDE.items())
            + "; DELETE FROM tortoise_migrations WHERE name = '0019_lz4_documents'")
        lab = await Workspace.create(name="lab")
        await settle_as_before(lab, "https://example.com/before", text, text)
        await get_connection("default").execute_query("UPDATE evidence_revision SET segments = $1::jsonb",
                                                      [json.dumps(segments)])
    connection = await asyncpg.connect(postgres_url)
    try:
        lz4 = await _has_lz4(connection)
    finally:
        await connection.close()

    async with open_store(postgres_url):  # the upgrade
        await settle_as_before(await Workspace.get(id=lab.id), "https://example.com/after", text + " Neu.", text)
        connection = get_connection("default")
        await connection.execute_query(
            "UPDATE evidence_revision SET segments = $1::jsonb WHERE text LIKE '%Neu.'", [json.dumps(segments)])
        stored = await connection.execute_query_dict(
            "SELECT e.source_key, pg_column_compression(r.text) AS text, pg_column_compression(r.markdown) AS markdown, "
            "pg_column_compression(r.segments) AS segments, pg_column_compression(w.words) AS words "
            "FROM evidence AS e JOIN evidence_revision AS r ON r.evidence_id = e.id "
            "JOIN document_words AS w ON w.evidence_id = e.id")
        reader = await principal_in(await Workspace.get(id=lab.id), "reader", "viewer")
        found = await search_documents(reader, "torfmoos")
        served = await get_documents(reader, ["documents/example.com/before"])  # type: ignore[arg-type]
    compressions = {row.pop("source_key"): set(row.values()) for row in stored}
    assert compressions == {"https://example.com/before": {"pglz"}, "https://example.com/after": {"lz4" if lz4 else "pglz"}}
    assert sorted(hit["parent"] for hit in found["results"]) == ["documents/example.com/after",
                                                                "documents/example.com/before"]
    assert text in str(served)


async def _has_lz4(connection: Any) -> bool:
    """Whether this PostgreSQL compresses with lz4 (14+, built with it): else pglz stays."""
    import asyncpg

    try:
        await connection.execute("CREATE TEMP TABLE lz4_probe (t text COMPRESSION lz4)")
    except asyncpg.PostgresError:
        return False
    return True
