"""What a settled page costs PostgreSQL (issue 54: a batch drains at the fetch and parse rate): the
index's statement parses a page's words once, however many columns hold them, and keeps the index
row and its copy of the words in one round trip."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tortoise.connection import get_connection

from evidencekit.server.evidence.index_words import entry_words
from evidencekit.server.evidence.store import search_index
from evidencekit.server.evidence.store.db import open_store

pytestmark = pytest.mark.anyio


class Recording:
    """A connection that keeps each statement it runs, with its values."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[tuple[str, list[Any]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def execute_query(self, sql: str, values: list[Any] | None = None) -> Any:
        self.sent.append((sql, list(values or [])))
        return await self.inner.execute_query(sql, values)


# A to_tsvector found before pg_catalog's on the search path, counting the calls over one text
COUNTING = """
CREATE SCHEMA counting;
CREATE SEQUENCE counting.parsed;
CREATE FUNCTION counting.to_tsvector(regconfig, text) RETURNS tsvector LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF $2 = current_setting('counting.text') THEN PERFORM nextval('counting.parsed'); END IF;
    RETURN pg_catalog.to_tsvector($1, $2);
END $$;
"""


async def test_the_index_parses_a_pages_words_once_for_both_of_its_tsvectors(postgres_url: str) -> None:
    """`search` (words and forms) and `search_exact` (words alone) both hold the text's tsvector: the
    statement parses the text once (PostgreSQL's plan parsed it for each column, half of the
    statement's CPU for a 20 KB page)."""
    async with open_store(postgres_url):
        connection = Recording(get_connection("default"))
        title, text = "Moore", "Torfmoos wächst im Hochmoor langsam, ein Millimeter im Jahr."
        await search_index.keep(connection, [search_index.Entry(
            uuid.uuid4(), 1, uuid.uuid4(), "https://a.example/moor", datetime.now(UTC) + timedelta(days=1), title, text)])
        insert, values = next((sql, values) for sql, values in connection.sent
                              if "INSERT INTO document_search" in sql)
        async with connection.inner.acquire_connection() as raw:
            await raw.execute(COUNTING)
            async with raw.transaction():
                await raw.execute("SET LOCAL search_path = counting, pg_catalog, public")
                await raw.execute("SELECT set_config('counting.text', $1, true)", entry_words(title, text)[1])
                await raw.execute(insert, *values)
                parsed = await raw.fetchval("SELECT last_value FROM counting.parsed WHERE is_called")
            held = await raw.fetchrow("SELECT search_exact::text AS exact, search::text AS search FROM document_search")
    assert parsed == 1
    assert "'torfmoos':2B" in held["exact"] and "'torfmoos':2B" in held["search"]


async def test_the_index_row_and_its_words_are_kept_in_one_round_trip(postgres_url: str) -> None:
    """document_search's row and document_words' copy of its words (what search_rank reads) are one
    statement, inside the settle's transaction: a settle's round trip fewer. A later revision
    replaces both; an older one replaces neither."""
    async with open_store(postgres_url):
        connection = Recording(get_connection("default"))
        evidence, workspace = uuid.uuid4(), uuid.uuid4()
        until = datetime.now(UTC) + timedelta(days=1)

        async def keep(revision: int, text: str) -> Any:
            connection.sent.clear()
            await search_index.keep(connection, [search_index.Entry(
                evidence, revision, workspace, "https://a.example/moor", until, "Moore", text)])
            assert len(connection.sent) == 1
            return await connection.inner.execute_query_dict(
                "SELECT s.revision, w.revision AS words_revision, w.words, s.search_exact::text AS exact "
                "FROM document_search AS s JOIN document_words AS w ON w.evidence_id = s.evidence_id")

        [first] = await keep(2, "Torfmoos wächst langsam.")
        [later] = await keep(3, "Wollgras blüht im Juni.")
        [kept] = await keep(1, "Ein älterer Stand.")
    assert first["words"].split("\n") == list(entry_words("Moore", "Torfmoos wächst langsam."))
    assert (later["revision"], later["words_revision"]) == (3, 3) and "wollgras" in later["words"]
    assert "'wollgras'" in later["exact"] and "torfmoos" not in later["exact"]
    assert kept == later
