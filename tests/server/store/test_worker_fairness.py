"""One workspace cannot hold every fetch slot: while its slow pages fill a worker's regular slots,
another workspace's page is taken up at once in a spare slot, on both databases."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from evidencekit.server.evidence import worker as worker_module
from evidencekit.server.evidence.retrieval.engine import Draft, RetrievalEngine, Retrieved
from evidencekit.server.evidence.store import jobs
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from tests.support import until

pytestmark = pytest.mark.anyio


def unavailable() -> dict[str, Any]:
    """A result as the engine makes it (contract-valid), for an origin that answered 5xx."""
    draft = Draft("url_text", None)
    draft.end("unavailable")
    return RetrievalEngine.finish_with_clock(draft, datetime.now(UTC)).result


class Origins:
    """Slow pages (a slow drip) take until released; any other page answers at once. Counts what
    runs where: regular places (`capacity`) and spare ones."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.spare_capacity = capacity, 2
        self.release = asyncio.Event()
        self.regular = self.spare = 0
        self.most_regular = self.most_spare = 0

    async def retrieve(self, url: str, kind: str, language: str | None = None, *, spare: bool = False) -> Retrieved:
        if spare:
            self.spare += 1
            self.most_spare = max(self.most_spare, self.spare)
        else:
            self.regular += 1
            self.most_regular = max(self.most_regular, self.regular)
        try:
            if "slow" in url:
                await self.release.wait()
            return Retrieved(unavailable(), None, None)
        finally:
            if spare:
                self.spare -= 1
            else:
                self.regular -= 1


async def settled(receipt_id: uuid.UUID) -> None:
    await until(lambda: Receipt.filter(id=receipt_id, state="completed").exists(), what=f"{receipt_id} to settle")


@pytest.fixture
def claims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many claims the worker has made (one item, counted as each ends)."""
    made = [0]
    real_claim = jobs.claim_many

    async def counted(*args: Any, **kwargs: Any) -> list[jobs.Claimed]:
        try:
            return await real_claim(*args, **kwargs)
        finally:
            made[0] += 1

    monkeypatch.setattr(jobs, "claim_many", counted)
    return made


@pytest.fixture
def full(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the worker's claimer waits for a slot to free with no time limit: its slots are full,
    and it looks for no new receipt until one frees."""
    waiting = [False]
    real_wait = worker_module._Hand._until_freed

    async def watched(hand: Any, stop: asyncio.Event, most: float | None = None) -> None:
        waiting[0] = most is None
        try:
            await real_wait(hand, stop, most)
        finally:
            waiting[0] = False

    monkeypatch.setattr(worker_module._Hand, "_until_freed", watched)
    return waiting


async def looked_again(claims: list[int]) -> None:
    """Until a claim begun after this call has ended: whatever was waiting then was looked at."""
    before = claims[0]
    await until(lambda: claims[0] >= before + 2, what="the worker to claim again")


async def test_a_calm_page_of_another_workspace_is_not_held_behind_one_workspaces_slow_pages(
        store: str, claims: list[int]) -> None:
    busy, calm = uuid.uuid4(), uuid.uuid4()
    for n in range(8):  # tenant A: eight slow-drip pages, more than the worker's slots
        await submit(RetrieveRequest(busy, uuid.uuid4(), f"https://slow.example/{n}", "url_text"))
    origins = Origins(capacity=8)
    worker = Worker(origins, WorkerSettings(concurrency=4, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await until(lambda: origins.regular == 4, what="A to hold every regular slot")
        page, _ = await submit(RetrieveRequest(calm, uuid.uuid4(), "https://calm.example/", "url_text"))
        await settled(page.id)  # not held behind the slow ones
        second, _ = await submit(RetrieveRequest(busy, uuid.uuid4(), "https://quick.example/", "url_text"))
        await looked_again(claims)
        # A's own further pages wait for A's slots: a spare slot is only for a workspace with nothing running
        assert (await Receipt.get(id=second.id)).state == "pending"
        assert origins.most_regular == 4 and origins.most_spare == 1
    finally:
        origins.release.set()
        stop.set()
        await running


async def test_without_spare_slots_the_calm_page_waits(store: str, full: list[bool]) -> None:
    """The control: with EVIDENCEKIT_WORKER_SPARE_SLOTS=0 the calm page waits for a slot, as before."""
    busy = uuid.uuid4()
    for n in range(4):
        await submit(RetrieveRequest(busy, uuid.uuid4(), f"https://slow.example/{n}", "url_text"))
    origins = Origins(capacity=8)
    worker = Worker(origins, WorkerSettings(concurrency=4, spare=0, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await until(lambda: origins.regular == 4, what="every slot to be held")
        page, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://calm.example/", "url_text"))
        await until(lambda: full[0], what="the worker to wait for a slot, looking for nothing new")
        assert (await Receipt.get(id=page.id)).state == "pending"  # and so it stays while the slow ones run
    finally:
        origins.release.set()
        stop.set()
        await running
