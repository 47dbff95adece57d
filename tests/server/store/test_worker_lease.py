"""The lease on a receipt in hand survives a passing database error: renewal logs it and goes on."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta
from typing import Any

import pytest

from evidencekit.server.evidence.retrieval.engine import Retrieved
from evidencekit.server.evidence.store import jobs
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings

pytestmark = pytest.mark.anyio
UNAVAILABLE: dict[str, Any] = {"status": "unavailable", "reason": "test"}


class SlowEngine:
    """Takes several lease periods to answer, as a slow origin would."""

    def __init__(self, seconds: float, capacity: int = 8) -> None:
        self.seconds = seconds
        self.capacity = capacity

    async def retrieve(self, url: str, kind: str, language: str | None = None) -> Retrieved:
        await asyncio.sleep(self.seconds)
        return Retrieved(UNAVAILABLE, None, None)


async def test_a_failed_renewal_is_logged_and_renewal_goes_on(
        store: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    receipt, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"))
    renewals: list[bool] = []
    real_renew = jobs.renew_many

    async def renew_failing_once(ids: list[str], worker_id: str, lease: timedelta) -> set[str]:
        if not renewals:
            renewals.append(False)
            raise ConnectionResetError("database connection reset")
        held = await real_renew(ids, worker_id, lease)
        renewals.append(held == {str(receipt.id)})
        return held

    monkeypatch.setattr(jobs, "renew_many", renew_failing_once)
    worker = Worker(SlowEngine(1.5), WorkerSettings(lease=timedelta(seconds=0.3),  # type: ignore[arg-type]
                                                    poll_interval=0.05))
    stop = asyncio.Event()
    with caplog.at_level(logging.WARNING, logger="evidencekit.worker"):
        running = asyncio.create_task(worker.run(stop))
        while (await Receipt.get(id=receipt.id)).state != "completed":
            await asyncio.sleep(0.05)
        stop.set()
        await running
    assert renewals[0] is False and len(renewals) >= 4 and all(renewals[1:])
    assert "could not renew the leases" in caplog.text and "ConnectionResetError" in caplog.text
    settled = await Receipt.get(id=receipt.id)
    assert (settled.state, settled.result, settled.lease_owner) == ("completed", UNAVAILABLE, None)


async def test_a_worker_claims_no_more_than_its_engine_runs_at_once(store: str) -> None:
    """With more slots than the engine's capacity, the extra receipts stay pending for other workers."""
    for _ in range(6):
        await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"))
    engine = SlowEngine(1.0, capacity=2)
    worker = Worker(engine, WorkerSettings(concurrency=5, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    await asyncio.sleep(0.5)
    assert await Receipt.filter(state="running").count() == 2
    stop.set()
    await running


def test_a_real_engine_runs_eight_retrievals_at_once_at_the_default_cap() -> None:
    """What the worker's slots are capped by (README: EVIDENCEKIT_WORKER_CONCURRENCY)."""
    from evidencekit.server.evidence.fetch.fetcher import Fetcher
    from evidencekit.server.evidence.retrieval.engine import RetrievalEngine

    assert RetrievalEngine(Fetcher()).capacity == 8


async def test_the_sweep_expires_and_purges_while_the_worker_runs(store: str) -> None:
    receipt, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"),
                              retention=timedelta(seconds=-1))
    worker = Worker(SlowEngine(0.01), WorkerSettings(poll_interval=0.05, sweep_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    deadline = asyncio.get_running_loop().time() + 10
    while (await Receipt.get(id=receipt.id)).purged_at is None:
        assert asyncio.get_running_loop().time() < deadline, "the sweep never ran"
        await asyncio.sleep(0.05)
    stop.set()
    await running
    assert (await Receipt.get(id=receipt.id)).state == "expired"
