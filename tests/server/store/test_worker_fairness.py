"""One workspace cannot hold every fetch slot: while its slow pages fill a worker's regular slots,
another workspace's page is taken up at once in a spare slot, on both databases."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from evidencekit.server.evidence.retrieval.engine import Draft, RetrievalEngine, Retrieved
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings

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


async def settled(receipt_id: uuid.UUID, seconds: float = 10) -> bool:
    deadline = asyncio.get_running_loop().time() + seconds
    while (await Receipt.get(id=receipt_id)).state != "completed":
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_a_calm_page_of_another_workspace_is_not_held_behind_one_workspaces_slow_pages(store: str) -> None:
    busy, calm = uuid.uuid4(), uuid.uuid4()
    for n in range(8):  # tenant A: eight slow-drip pages, more than the worker's slots
        await submit(RetrieveRequest(busy, uuid.uuid4(), f"https://slow.example/{n}", "url_text"))
    origins = Origins(capacity=8)
    worker = Worker(origins, WorkerSettings(concurrency=4, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        while origins.regular < 4:  # A holds every regular slot
            await asyncio.sleep(0.02)
        page, _ = await submit(RetrieveRequest(calm, uuid.uuid4(), "https://calm.example/", "url_text"))
        assert await settled(page.id), "the calm page waited behind the slow ones"
        second, _ = await submit(RetrieveRequest(busy, uuid.uuid4(), "https://quick.example/", "url_text"))
        await asyncio.sleep(0.3)
        # A's own further pages wait for A's slots: a spare slot is only for a workspace with nothing running
        assert (await Receipt.get(id=second.id)).state == "pending"
        assert origins.most_regular == 4 and origins.most_spare == 1
    finally:
        origins.release.set()
        stop.set()
        await running


async def test_without_spare_slots_the_calm_page_waits(store: str) -> None:
    """The control: with EVIDENCEKIT_WORKER_SPARE_SLOTS=0 the calm page waits for a slot, as before."""
    busy = uuid.uuid4()
    for n in range(4):
        await submit(RetrieveRequest(busy, uuid.uuid4(), f"https://slow.example/{n}", "url_text"))
    origins = Origins(capacity=8)
    worker = Worker(origins, WorkerSettings(concurrency=4, spare=0, poll_interval=0.05))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        while origins.regular < 4:
            await asyncio.sleep(0.02)
        page, _ = await submit(RetrieveRequest(uuid.uuid4(), uuid.uuid4(), "https://calm.example/", "url_text"))
        assert not await settled(page.id, seconds=0.5)
    finally:
        origins.release.set()
        stop.set()
        await running
