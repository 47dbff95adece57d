"""Dead lease holders are found while workers run: a process of this machine that is gone, or a
holder anywhere whose heartbeat stopped; a holder that beats keeps its receipts."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest

from evidencekit.server.evidence import lease_owner
from evidencekit.server.evidence.store import heartbeats, jobs
from evidencekit.server.evidence.store.models import Receipt, WorkerBeat
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from tests.support import until

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


async def beat_at(owner: str, seconds_ago: float, every: float = 1.0) -> None:
    """A beat `seconds_ago` by the database's clock (written, then moved back)."""
    from tortoise.connection import get_connection

    from evidencekit.server.evidence.store.sql import is_postgres_connection

    await heartbeats.beat(owner, every)
    connection = get_connection("default")
    postgres = is_postgres_connection(connection)
    await connection.execute_query(
        f"UPDATE worker_beat SET beat_at = beat_at - {'$1' if postgres else '?1'} "
        f"WHERE worker_id = {'$2' if postgres else '?2'}", [seconds_ago, owner])


async def test_a_holder_whose_heartbeat_stopped_loses_its_leases_at_once(store: str) -> None:
    other_machine = "elsewhere:0123456789abcdef:4242:1:abcd1234"  # no /proc of ours can judge it
    silent = await held_by(other_machine)
    worker = Worker(NoEngine(), WorkerSettings(heartbeat=1), worker_id=lease_owner.worker_id())  # type: ignore[arg-type]
    await beat_at(other_machine, 3)
    assert await worker.take_up_the_dead(watched=60) == 0  # silent for 3 s: not yet 4 of its beats
    await beat_at(other_machine, 5)
    assert await worker.take_up_the_dead(watched=3) == 0  # a watcher beating for 3 s could not have seen it
    assert await worker.take_up_the_dead(watched=60) == 1
    assert await WorkerBeat.filter(worker_id=other_machine).count() == 0  # its beat forgotten with it
    receipt = await Receipt.get(id=silent)
    assert receipt.state == "running" and receipt.attempts == 1  # the attempt it spent still counts
    assert await claimable(silent)


async def test_a_holder_is_judged_by_its_own_interval(store: str) -> None:
    slow_beater = "elsewhere:0123:9:1:aaaa0009"
    await held_by(slow_beater)
    await beat_at(slow_beater, 30, every=10)  # beats every 10 s: 30 s of silence is three beats
    worker = Worker(NoEngine(), WorkerSettings(heartbeat=1))  # type: ignore[arg-type]
    assert await worker.take_up_the_dead(watched=600) == 0
    await beat_at(slow_beater, 45, every=10)  # four and a half
    assert await worker.take_up_the_dead(watched=600) == 1


async def test_a_holder_that_beats_or_never_beat_keeps_its_leases(store: str) -> None:
    beating, legacy = "elsewhere:0123:1:1:aaaa0001", "elsewhere:0123:2:1:aaaa0002"
    for owner in (beating, legacy):
        await held_by(owner)
    await heartbeats.beat(beating, 1.0)
    worker = Worker(NoEngine(), WorkerSettings(heartbeat=1))  # type: ignore[arg-type]
    assert await worker.take_up_the_dead(watched=600) == 0  # a worker of an earlier version writes no beat
    assert await jobs.claim("taker", LEASE, max_attempts=3) is None


async def test_a_worker_beats_while_it_runs_and_forgets_its_beat_when_it_stops(store: str) -> None:
    import asyncio

    worker = Worker(NoEngine(), WorkerSettings(heartbeat=0.05, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    first = (await until(lambda: WorkerBeat.get_or_none(worker_id=worker.worker_id), what="a beat")).beat_at
    await until(lambda: WorkerBeat.filter(worker_id=worker.worker_id, beat_at__gt=first).exists(), what="another beat")
    stop.set()
    await running
    assert await WorkerBeat.filter(worker_id=worker.worker_id).count() == 0


async def test_a_dead_process_of_this_machine_is_taken_up_even_when_the_heartbeats_fail(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The look through /proc needs no heartbeat: a failing heartbeat statement (a table of another
    version) kept a SIGKILLed worker's receipts waiting out their lease."""
    import subprocess

    if not lease_owner.boot_id():
        pytest.skip("the kernel names no boot here: nothing of this machine is judged dead")
    child = subprocess.Popen(["sleep", "30"])
    dead = lease_owner.worker_id(child.pid)
    receipt_id = await held_by(dead)
    child.kill()
    child.wait()

    async def broken(watched: float) -> list[str]:
        raise RuntimeError("column every does not exist")

    monkeypatch.setattr(heartbeats, "silent_owners", broken)
    worker = Worker(NoEngine(), WorkerSettings(heartbeat=1))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        await worker.take_up_the_dead(watched=60)
    assert await claimable(receipt_id)  # its lease was ended before the heartbeat look failed
