"""A worker facing a database it cannot write (SQLite held locked by another process) pauses all its
claims together, says so in one line, and takes the work up once the database is free again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from pathlib import Path

import pytest

from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from tests.server.store.test_worker_lease import SlowEngine

pytestmark = pytest.mark.anyio


async def test_a_locked_database_gets_spaced_claims_and_one_line_warnings(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    database = tmp_path / "locked.sqlite3"
    async with open_store(f"sqlite:///{database}?busy_timeout=200"):
        receipt, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"))
        holder = sqlite3.connect(database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # as `sqlite3` in a terminal, or a backup tool, would
        worker = Worker(SlowEngine(0.0), WorkerSettings(concurrency=4, poll_interval=0.05))  # type: ignore[arg-type]
        stop = asyncio.Event()
        with caplog.at_level(logging.WARNING, logger="evidencekit.worker"):
            running = asyncio.create_task(worker.run(stop))
            await asyncio.sleep(2.5)
            holder.execute("COMMIT")
            holder.close()
            deadline = time.monotonic() + 20
            while (await Receipt.get(id=receipt.id)).state != "completed":
                assert time.monotonic() < deadline, "the worker never came back to the receipt"
                await asyncio.sleep(0.1)
            stop.set()
            await running
    unavailable = [r for r in caplog.records if "database unavailable" in r.getMessage()]
    # Four slots claiming every 0.05 s, each waiting out the 0.2 s busy timeout, would log ~40 here.
    assert 1 <= len(unavailable) <= 8, [r.getMessage() for r in unavailable]
    assert all(r.exc_info is None for r in caplog.records)  # one line each, no traceback
