"""What a page's submit and settle cost SQLite's connection in hops to aiosqlite's thread (issue 54:
each is ~60 us of CPU, two threads woken): one per statement, the first with its BEGIN, and the
COMMIT. tortoise's transaction sent a commit before its BEGIN, finding nothing to commit, and the
BEGIN on its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from tortoise.connection import get_connection
from tortoise.transactions import in_transaction

from evidencekit.server.evidence import source_urls
from evidencekit.server.evidence.store import jobs, ratelimit, receipts
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.evidence import Content
from evidencekit.server.evidence.store.store_keys import store_key
from evidencekit.server.evidence.store.write_transaction import write_transaction
from tests.server.store.test_receipts import RESULT

pytestmark = pytest.mark.anyio


@contextmanager
def hops(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The name of each function aiosqlite runs on its thread meanwhile."""
    sent: list[str] = []
    real = aiosqlite.Connection._execute

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(f"{getattr(fn, '__name__', fn)} {str(args[0]).split()[0] if args else ''}".strip())
        return await real(self, fn, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(aiosqlite.Connection, "_execute", counted)
        yield sent


async def test_a_new_receipts_submit_and_its_settle_hop_once_a_statement_and_to_commit(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}"):
        await get_connection("default").execute_query("SELECT 1")  # the connection is opened
        request = receipts.RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://a.example/moor", "url_text")

        async def charge(connection: Any) -> None:
            assert await ratelimit.admit(request.workspace_id, 100, connection=connection) is None

        with hops(monkeypatch) as submitted:
            _, created = await receipts.submit(request, admit=charge)
        assert created
        [claimed] = await jobs.claim_many("w1", timedelta(seconds=60), max_attempts=3, limit=1)
        content = Content("h1", request.url, "Moore", None, "Torfmoos wächst langsam.", "Torfmoos", [])
        await store_key(source_urls.NAMES_KEY)  # read once per client: before
        with hops(monkeypatch) as settled:
            assert await jobs.settle_many("w1", [jobs.Settle(claimed, RESULT, content)]) == {str(claimed.id)}
    # BEGIN and the receipt's insert, the rate's count
    assert submitted == ["begin_and_run", "_execute_fetchall SELECT", "commit"]
    # BEGIN and the evidence row, its revision's number and row, the index, the receipt
    assert settled == ["begin_and_run", "_execute_fetchall UPDATE", "_execute_fetchall INSERT",
                       "_execute_fetchall INSERT", "_execute_fetchall UPDATE", "commit"]


async def test_a_transaction_left_open_is_committed_before_the_next_begins_as_tortoise_did(
        tmp_path: Path) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}"):
        raw = get_connection("default")
        await raw.execute_query("SELECT 1")
        request = receipts.RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://a.example/moor", "url_text")
        await raw.execute_query("BEGIN")  # as if a transaction's end never ran
        _, created = await receipts.submit(request)
        assert created
        assert (await receipts.existing(request)) is not None


async def test_a_transaction_that_sends_nothing_costs_no_hop_and_a_savepoint_begins_one_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}"):
        await get_connection("default").execute_query("SELECT 1")
        with hops(monkeypatch) as idle:
            async with write_transaction():
                pass
        assert idle == []
        async with write_transaction() as connection:
            try:
                async with in_transaction():  # a savepoint of the open transaction, undone
                    await connection.execute_query("INSERT INTO store_key (name, secret) VALUES ('undone', '00')")
                    raise LookupError
            except LookupError:
                pass
            await connection.execute_query("INSERT INTO store_key (name, secret) VALUES ('kept', '00')")
        names = await get_connection("default").execute_query_dict("SELECT name FROM store_key WHERE name IN ('kept', 'undone')")
    assert [row["name"] for row in names] == ["kept"]
