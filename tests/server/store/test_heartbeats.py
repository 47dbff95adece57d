"""Dead lease holders are found while workers run: a process of this machine that is gone, or a
holder anywhere whose heartbeat stopped; a holder that beats keeps its receipts."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from evidencekit.server.evidence import lease_owner
from evidencekit.server.evidence.store import heartbeats, jobs
from evidencekit.server.evidence.store.models import Receipt, WorkerBeat
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings

pytestmark = pytest.mark.anyio
LEASE = timedelta(seconds=60)


class NoEngine:
    capacity = 4


async def held_by(owner: str) -> uuid.UUID:
    receipt, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://example.com/", "url_text"))
    claimed = await jobs.claim(owner, LEASE, max_attempts=3)
    assert claimed is not None and claimed.id == receipt.id
    return receipt.id


async def claimable(receipt_id: uuid.UUID) -> bool:
    return await jobs.claim("taker", LEASE, max_attempts=3) is not None


async def test_a_holder_whose_heartbeat_stopped_loses_its_leases_at_once(store: str) -> None:
    other_machine = "elsewhere:0123456789abcdef:4242:1:abcd1234"  # no /proc of ours can judge it
    silent = await held_by(other_machine)
    worker = Worker(NoEngine(), WorkerSettings(heartbeat=1), worker_id=lease_owner.worker_id())  # type: ignore[arg-type]
    await heartbeats.beat(other_machine, now=datetime.now(UTC) - timedelta(seconds=3))
    assert await worker.take_up_the_dead() == 0  # silent for 3 s: not yet 4 beats
    await heartbeats.beat(other_machine, now=datetime.now(UTC) - timedelta(seconds=5))
    assert await worker.take_up_the_dead() == 1
    assert await WorkerBeat.filter(worker_id=other_machine).count() == 0  # its beat forgotten with it
    receipt = await Receipt.get(id=silent)
    assert receipt.state == "running" and receipt.attempts == 1  # the attempt it spent still counts
    assert await claimable(silent)


async def test_a_holder_that_beats_or_never_beat_keeps_its_leases(store: str) -> None:
    beating, legacy = "elsewhere:0123:1:1:aaaa0001", "elsewhere:0123:2:1:aaaa0002"
    for owner in (beating, legacy):
        await held_by(owner)
    await heartbeats.beat(beating)
    worker = Worker(NoEngine(), WorkerSettings(heartbeat=1))  # type: ignore[arg-type]
    assert await worker.take_up_the_dead() == 0  # a worker of an earlier version writes no beat: its lease runs
    assert await jobs.claim("taker", LEASE, max_attempts=3) is None


async def test_a_worker_beats_while_it_runs_and_forgets_its_beat_when_it_stops(store: str) -> None:
    import asyncio

    worker = Worker(NoEngine(), WorkerSettings(heartbeat=0.05, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    first = None
    for _ in range(100):
        beat = await WorkerBeat.get_or_none(worker_id=worker.worker_id)
        if beat is not None and first is None:
            first = beat.beat_at
        elif beat is not None and beat.beat_at > first:  # type: ignore[operator]
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the worker did not beat again")
    stop.set()
    await running
    assert await WorkerBeat.filter(worker_id=worker.worker_id).count() == 0
