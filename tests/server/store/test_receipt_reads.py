"""The status read bypasses the ORM; it must read exactly what the ORM reads, at once, and never fail
because SQLite is busy."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from evidencekit.server.evidence.store import jobs, receipt_reads, receipts
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt
from tests.server.store.test_receipts import RESULT, WORKSPACE, content, contract_errors, request

pytestmark = pytest.mark.anyio


async def same_as_orm(mutation_id: uuid.UUID, now: datetime | None = None) -> dict:  # type: ignore[type-arg]
    view = await receipt_reads.find_view(WORKSPACE, mutation_id)
    assert view is not None
    fast = receipts.as_retrieval(view, now=now)
    assert fast == receipts.as_retrieval(await Receipt.get(workspace_id=WORKSPACE, mutation_id=mutation_id), now=now)
    assert contract_errors(fast) == []
    return fast


async def test_the_direct_read_equals_the_orm_read_in_every_state(store: str) -> None:
    assert await receipt_reads.find_view(WORKSPACE, uuid.uuid4()) is None
    pending, _ = await receipts.submit(request())
    assert (await same_as_orm(pending.mutation_id))["state"] == "pending"  # seen as soon as committed

    claimed = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None
    assert (await same_as_orm(pending.mutation_id))["state"] == "running"
    await jobs.settle(claimed, "w1", RESULT, content("Søme text — ünïcode"))
    done = await same_as_orm(pending.mutation_id)
    assert done["state"] == "completed" and done["evidence"]["revision"] == 1 and done["settled_at"].endswith("Z")
    assert done["result"] == RESULT

    later = await same_as_orm(pending.mutation_id, now=datetime.now(UTC) + timedelta(days=2))
    assert later["state"] == "expired" and later["result"]["text"] == ""
    assert await receipt_reads.find_view(uuid.uuid4(), pending.mutation_id) is None  # another workspace


async def test_timestamps_are_read_as_the_orm_reads_them_with_a_fraction_or_without(store: str) -> None:
    receipt, _ = await receipts.submit(request())
    whole = datetime(2026, 12, 1, 8, 45, 4, tzinfo=UTC)
    for created, valid in ((whole, whole + timedelta(days=400)),
                           (whole.replace(microsecond=100), whole.replace(microsecond=999999)),
                           (datetime(2026, 12, 1, 10, 45, 4, 120000, tzinfo=timezone(timedelta(hours=2))),
                            whole + timedelta(days=400))):
        await Receipt.filter(id=receipt.id).update(created_at=created, settled_at=created, valid_until=valid)
        read = await same_as_orm(receipt.mutation_id, now=whole)
        assert (read["created_at"], read["settled_at"]) == (created.astimezone(UTC).isoformat().replace("+00:00", "Z"),) * 2
    assert read["created_at"] == "2026-12-01T08:45:04.120000Z"


async def test_a_busy_sqlite_database_is_read_through_the_async_connection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # WAL readers are blocked only in rare moments (e.g. WAL recovery) that a test cannot provoke
    # reliably, so the direct connection is made to answer the way SQLite does then.
    class Busy:
        def execute(self, *_: object) -> None:
            raise sqlite3.OperationalError("database is locked")

    async with open_store(f"sqlite:///{tmp_path / 'busy.sqlite3'}?busy_timeout=10000"):
        receipt, _ = await receipts.submit(request())
        monkeypatch.setattr(receipt_reads, "_direct_connection", lambda filename: Busy())
        view = await receipt_reads.find_view(WORKSPACE, receipt.mutation_id)
        assert view is not None and view.id == str(receipt.id) and view.state == "pending"


def test_the_direct_readers_of_a_store_close_with_it(tmp_path: Path) -> None:
    import asyncio

    async def read_once() -> None:
        async with open_store(f"sqlite:///{tmp_path / 'closing.sqlite3'}"):
            receipt, _ = await receipts.submit(request())
            assert await receipt_reads.find_view(WORKSPACE, receipt.mutation_id) is not None
            assert any(name.endswith("closing.sqlite3") for name, _ in receipt_reads._all_direct)

    asyncio.run(read_once())
    assert not any(name.endswith("closing.sqlite3") for name, _ in receipt_reads._all_direct)


async def test_a_reader_closed_from_another_thread_is_replaced(tmp_path: Path) -> None:
    import threading

    async with open_store(f"sqlite:///{tmp_path / 'reopen.sqlite3'}"):
        receipt, _ = await receipts.submit(request())
        assert await receipt_reads.find_view(WORKSPACE, receipt.mutation_id) is not None
        closer = threading.Thread(target=receipt_reads.close_direct)
        closer.start()
        closer.join()
        for _ in range(2):  # closing forgot the reader: the next read opens a new one, and keeps it
            view = await receipt_reads.find_view(WORKSPACE, receipt.mutation_id)
            assert view is not None and view.state == "pending"


async def test_reads_asked_together_each_get_their_own_receipt(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # 70 receipts (more than one SQLite statement holds), asked all at once with keys that match
    # nothing: one in another workspace, one never made.
    made = [(await receipts.submit(request(f"https://example.com/{n}", mutation_id=uuid.uuid4())))[0]
            for n in range(70)]
    statements: list[str] = []
    if not store.startswith("postgres"):
        direct = receipt_reads._direct_connection
        monkeypatch.setattr(receipt_reads, "_direct_connection", lambda filename: traced(direct(filename)))

        def traced(connection: sqlite3.Connection) -> sqlite3.Connection:
            connection.set_trace_callback(statements.append)
            return connection

    asked = [(WORKSPACE, receipt.mutation_id) for receipt in made]
    asked += [(uuid.uuid4(), made[0].mutation_id), (WORKSPACE, uuid.uuid4()), asked[3]]
    views = await asyncio.gather(*(receipt_reads.find_view(workspace, mutation) for workspace, mutation in asked))
    for receipt, view in zip(made, views, strict=False):
        assert view is not None and str(view.id) == str(receipt.id)
        assert str(view.mutation_id) == str(receipt.mutation_id)
        assert receipts.as_retrieval(view) == receipts.as_retrieval(await Receipt.get(id=receipt.id))
    assert views[70:72] == [None, None]
    assert views[72] == views[3]
    if statements:  # SQLite: 64 keys in one statement, the other 8 in a second
        assert len([statement for statement in statements if "receipt" in statement]) == 2


async def test_postgresql_ending_the_reads_connection_costs_no_read(postgres_url: str) -> None:
    """The connection kept for status reads (pg_reads) may be ended under it: by a restart, or an
    administrator. The next read takes a new one and answers."""
    import asyncpg

    from evidencekit.server.evidence.store import pg_reads

    async with open_store(postgres_url):
        receipt, _ = await receipts.submit(request())
        for _ in range(3):
            assert await receipt_reads.find_view(WORKSPACE, receipt.mutation_id) is not None
            kept = next(iter(pg_reads._held.values()))
            admin = await asyncpg.connect(postgres_url)
            try:
                assert await admin.fetchval("SELECT pg_terminate_backend($1)", kept.get_server_pid())
            finally:
                await admin.close()
            view = await receipt_reads.find_view(WORKSPACE, receipt.mutation_id)
            assert view is not None and view.state == "pending"
    assert pg_reads._held == {}  # given back when the store closed


async def test_postgresql_a_pool_of_one_serves_the_reads_and_every_other_query(postgres_url: str) -> None:
    """The status reads keep a connection of their own: a pool configured to hold one must still
    leave one for the ORM (submits, the bearer check, the worker)."""
    async with open_store(f"{postgres_url}?maxsize=1"):
        async def submit_and_read() -> None:
            for _ in range(2):
                receipt, _ = await receipts.submit(request())
                assert await receipt_reads.find_view(WORKSPACE, receipt.mutation_id) is not None
                assert await Receipt.get(mutation_id=receipt.mutation_id)

        await asyncio.wait_for(submit_and_read(), timeout=30)


class SilencingRelay:
    """A TCP relay to PostgreSQL that can make one of its connections go silent, as a NAT or a
    firewall that dropped it would: what is sent on it is swallowed, nothing comes back, nothing
    is closed. Other connections pass."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.silenced: set[int] = set()  # client-side ports
        self.port = 0

    async def __aenter__(self) -> SilencingRelay:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        self.server.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client_port = writer.get_extra_info("peername")[1]
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while data := await source.read(65536):
                    if client_port not in self.silenced:
                        sink.write(data)
                        await sink.drain()
            except ConnectionError:
                pass
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def test_postgresql_a_reads_connection_gone_silent_is_replaced_after_the_deadline(
        monkeypatch: pytest.MonkeyPatch, postgres_url: str) -> None:
    """The kept connection never idles in the pool, so the pool's idle expiry never ends it; one
    the network dropped without a word must cost a read its deadline, not every read the
    kernel's minutes."""
    from urllib.parse import urlsplit

    from evidencekit.server.evidence.store import pg_reads

    monkeypatch.setattr(pg_reads, "STATEMENT_SECONDS", 0.5)
    address = urlsplit(postgres_url)
    assert address.hostname is not None and address.port is not None
    async with SilencingRelay(address.hostname, address.port) as relay, \
            open_store(postgres_url.replace(f"@{address.hostname}:{address.port}/", f"@127.0.0.1:{relay.port}/")):
        receipt, _ = await receipts.submit(request())
        assert await receipt_reads.find_view(WORKSPACE, receipt.mutation_id) is not None
        kept = next(iter(pg_reads._held.values()))
        underneath = kept._con  # the pool's proxy lets go of it when it goes back
        relay.silenced.add(kept._transport.get_extra_info("sockname")[1])
        view = await asyncio.wait_for(receipt_reads.find_view(WORKSPACE, receipt.mutation_id), timeout=15)
        assert view is not None and view.state == "pending"
        assert next(iter(pg_reads._held.values())) is not kept
        assert underneath.is_closed()  # ended, not handed out again


@pytest.mark.parametrize("text", ["plain", "Søme text — ünïcode 中文", "a lone surrogate: \ud800 stays readable"])
def test_a_stored_result_reads_back_as_it_was_written(text: str) -> None:
    """Results written before 0006 are json.dumps' text (tortoise's JSONField); the fast decoder must
    read every one of them exactly, including escapes it refuses on its own."""
    import json

    stored = {"kind": "url_text", "text": text, "warnings": [], "segments": [{"start_ms": 2**40}], "reason": None}
    written = json.dumps(stored)
    for as_read in (written, written.encode()):  # text, or its UTF-8 bytes as the status reads take it
        row = ["id", "w", "m", "completed", "url_text", "t0", "t1", "t2", as_read, None, None, "h"]
        assert receipt_reads.ReceiptView.from_row(row).result == stored


async def test_a_settled_result_is_stored_as_utf8_text(store: str) -> None:
    """A page in Hebrew is stored as its characters (two bytes each in UTF-8), not as \\u escapes
    (six), and read back as settled."""
    from tortoise.connection import get_connection

    from evidencekit.server.evidence.store.sql import param, sql_uuid

    postgres = store.startswith("postgres")
    pending, _ = await receipts.submit(request())
    claimed = await jobs.claim("w1", timedelta(seconds=30), max_attempts=3)
    assert claimed is not None
    page = {**RESULT, "text": "שלום עולם " * 200}
    await jobs.settle(claimed, "w1", page, content("שלום"))
    _, rows = await get_connection("default").execute_query(
        f"SELECT result FROM receipt WHERE id = {param(1, postgres)}", [sql_uuid(pending.id, postgres)])
    stored = rows[0][0]
    assert "שלום עולם" in stored and "\\u05e9" not in stored
    assert (await same_as_orm(pending.mutation_id))["result"] == page
