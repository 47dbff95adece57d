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
from tests.support import until

pytestmark = pytest.mark.anyio
UNAVAILABLE: dict[str, Any] = {"status": "unavailable", "reason": "test"}


class HeldEngine:
    """Answers (unavailable) once the test sets `answer`, as an origin slow for as long as the test
    wants would; or at once. `started`: the retrievals begun."""

    def __init__(self, capacity: int = 8, *, at_once: bool = False) -> None:
        self.capacity = capacity
        self.answer = asyncio.Event()
        if at_once:
            self.answer.set()
        self.started = 0

    async def retrieve(self, url: str, kind: str, language: str | None = None) -> Retrieved:
        self.started += 1
        await self.answer.wait()
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
    engine = HeldEngine()  # the retrieval lasts several lease periods: until four renewals were made
    worker = Worker(engine, WorkerSettings(lease=timedelta(seconds=0.3),  # type: ignore[arg-type]
                                           poll_interval=0.05))
    stop = asyncio.Event()
    with caplog.at_level(logging.WARNING, logger="evidencekit.worker"):
        running = asyncio.create_task(worker.run(stop))
        await until(lambda: len(renewals) >= 4, what="four renewals")
        # those made while the retrieval ran; one made as it settles may find it settled already
        while_running = list(renewals)
        engine.answer.set()
        await until(lambda: Receipt.filter(id=receipt.id, state="completed").exists(), what="the settle")
        stop.set()
        await running
    assert while_running[0] is False and all(while_running[1:]), while_running
    assert "could not renew the leases" in caplog.text and "ConnectionResetError" in caplog.text
    settled = await Receipt.get(id=receipt.id)
    assert (settled.state, settled.result, settled.lease_owner) == ("completed", UNAVAILABLE, None)


async def test_a_worker_claims_no_more_than_its_engine_runs_at_once(store: str) -> None:
    """With more slots than the engine's capacity, the extra receipts stay pending for other workers."""
    for _ in range(6):
        await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"))
    engine = HeldEngine(capacity=2)
    worker = Worker(engine, WorkerSettings(concurrency=5, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    await until(lambda: engine.started == 2, what="two retrievals")
    assert await Receipt.filter(state="running").count() == 2  # one claim took them: it took no more
    engine.answer.set()
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
    worker = Worker(HeldEngine(at_once=True), WorkerSettings(poll_interval=0.05,  # type: ignore[arg-type]
                                                             sweep_interval=0.05))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    await until(lambda: Receipt.filter(id=receipt.id, purged_at__isnull=False).exists(), what="the sweep")
    stop.set()
    await running
    assert (await Receipt.get(id=receipt.id)).state == "expired"
