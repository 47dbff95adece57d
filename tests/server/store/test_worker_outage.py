"""A worker facing a database it cannot write (SQLite held locked by another process) pauses all its
claims together, says so in one line, and takes the work up once the database is free again."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from evidencekit.server.evidence.store import jobs
from evidencekit.server.evidence.store.db import open_store
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from tests.server.store.test_worker_lease import HeldEngine
from tests.support import until

pytestmark = pytest.mark.anyio


async def test_a_locked_database_gets_spaced_claims_and_one_line_warnings(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held locked until the worker's claims have failed twice: the pause after a failure is 1 s,
    then twice that, and each failure is one line. Four slots claiming every 0.05 s, each waiting
    out the 0.2 s busy timeout, logged ~40 lines in 2.5 s."""
    database = tmp_path / "locked.sqlite3"
    claims: list[tuple[float, float, bool]] = []  # (started, ended, failed), by time.monotonic()
    real_claim = jobs.claim_many

    async def timed_claim(*args: Any, **kwargs: Any) -> list[jobs.Claimed]:
        started = time.monotonic()
        try:
            claimed = await real_claim(*args, **kwargs)
        except Exception:
            claims.append((started, time.monotonic(), True))
            raise
        claims.append((started, time.monotonic(), False))
        return claimed

    monkeypatch.setattr(jobs, "claim_many", timed_claim)
    async with open_store(f"sqlite:///{database}?busy_timeout=200"):
        receipt, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"))
        holder = sqlite3.connect(database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # as `sqlite3` in a terminal, or a backup tool, would
        worker = Worker(HeldEngine(at_once=True), WorkerSettings(concurrency=4,  # type: ignore[arg-type]
                                                                 poll_interval=0.05))
        stop = asyncio.Event()
        with caplog.at_level(logging.WARNING, logger="evidencekit.worker"):
            running = asyncio.create_task(worker.run(stop))
            await until(lambda: len(claims) >= 2, what="two failed claims")
            holder.execute("COMMIT")
            holder.close()
            await until(lambda: Receipt.filter(id=receipt.id, state="completed").exists(),
                        what="the worker to come back to the receipt")
            stop.set()
            await running
    failed = [claim for claim in claims if claim[2]]
    assert len(claims) >= 3 and claims[0][2] and claims[1][2], claims
    # each claim waits out the pause from the failure before it: 1 s, then twice that
    assert claims[1][0] - claims[0][1] >= 1.0 and claims[2][0] - claims[1][1] >= 2.0, claims[:3]
    said = [r.getMessage() for r in caplog.records if "trying again in" in r.getMessage()]
    assert len(said) == len(failed) and all("database unavailable" in line for line in said), said
    assert all(r.exc_info is None for r in caplog.records)  # one line each, no traceback
