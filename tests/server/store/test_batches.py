"""Claims and settles in batches: several receipts per statement, each settled wholly or not at all."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest

from evidencekit.server.evidence.retrieval.engine import Retrieved
from evidencekit.server.evidence.source_urls import source_key
from evidencekit.server.evidence.store import evidence as evidence_store
from evidencekit.server.evidence.store import jobs, receipts
from evidencekit.server.evidence.store.models import Evidence, EvidenceRevision, Receipt
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from tests.server.store.test_receipts import RESULT, content, request
from tests.support import until

pytestmark = pytest.mark.anyio
LEASE = timedelta(seconds=30)


async def submitted(count: int, **changes: Any) -> list[Receipt]:
    made = []
    for number in range(count):
        receipt, _ = await receipts.submit(request(f"https://example.com/{number}", mutation_id=uuid.uuid4(),
                                                   **changes))
        made.append(receipt)
    return made


async def test_one_claim_takes_up_to_its_limit_oldest_first(store: str) -> None:
    made = await submitted(5)
    claimed = await jobs.claim_many("w", LEASE, max_attempts=3, limit=3)
    assert sorted(c.id for c in claimed) == sorted(r.id for r in made[:3])
    assert {c.attempts for c in claimed} == {1}
    rest = await jobs.claim_many("w2", LEASE, max_attempts=3, limit=10)
    assert sorted(c.id for c in rest) == sorted(r.id for r in made[3:])
    assert await jobs.claim_many("w3", LEASE, max_attempts=3, limit=10) == []


async def test_a_batch_claim_serves_every_idle_workspace_before_a_backlog(store: str) -> None:
    busy = await submitted(6, workspace_id=uuid.uuid4())
    quiet = [await submitted(1, workspace_id=uuid.uuid4()) for _ in range(2)]
    claimed = {c.id for c in await jobs.claim_many("w", LEASE, max_attempts=3, limit=3)}
    assert claimed == {busy[0].id, quiet[0][0].id, quiet[1][0].id}


async def test_concurrent_claims_never_take_a_receipt_twice(store: str) -> None:
    made = await submitted(40)
    batches = await asyncio.gather(*(jobs.claim_many(f"w{n}", LEASE, max_attempts=3, limit=6) for n in range(8)))
    taken = [c.id for batch in batches for c in batch]
    assert len(taken) == len(set(taken)) and set(taken) <= {r.id for r in made}
    assert await Receipt.filter(state="running").count() == len(taken)


async def test_a_batch_settles_what_it_holds_and_leaves_a_lost_lease_alone(store: str) -> None:
    await submitted(3)
    claimed = await jobs.claim_many("w", LEASE, max_attempts=3, limit=3)
    lost = claimed[1]
    await Receipt.filter(id=lost.id).update(lease_owner="someone-else")  # another worker took it over
    settled = await jobs.settle_many("w", [jobs.Settle(c, RESULT, content(f"text {c.url}")) for c in claimed])
    assert settled == {str(claimed[0].id), str(claimed[2].id)}
    assert (await Receipt.get(id=lost.id)).state == "running"
    # no evidence was recorded for the receipt not held: its write was undone with the first try
    assert await Evidence.filter(source_key=source_key(lost.url, b"")).count() == 0  # no query: no key
    assert await EvidenceRevision.all().count() == 2


async def test_a_batch_that_fails_midway_settles_none_of_its_receipts(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    await submitted(3)
    claimed = await jobs.claim_many("w", LEASE, max_attempts=3, limit=3)
    real = evidence_store.record_many

    async def then_crash(*args: Any) -> list[tuple[str, int]]:
        await real(*args)
        raise ConnectionResetError("the database went away mid-settle")

    monkeypatch.setattr(evidence_store, "record_many", then_crash)
    with pytest.raises(ConnectionResetError):
        await jobs.settle_many("w", [jobs.Settle(c, RESULT, content(c.url)) for c in claimed])
    assert await Receipt.filter(state="running").count() == 3
    assert await Evidence.all().count() == 0 and await EvidenceRevision.all().count() == 0
    monkeypatch.setattr(evidence_store, "record_many", real)
    assert len(await jobs.settle_many("w", [jobs.Settle(c, RESULT, content(c.url)) for c in claimed])) == 3


async def test_one_source_twice_in_a_batch_follows_its_content_in_order(store: str) -> None:
    for _ in range(3):
        await receipts.submit(request("https://example.com/same", mutation_id=uuid.uuid4()))
    claimed = sorted(await jobs.claim_many("w", LEASE, max_attempts=3, limit=3), key=lambda c: str(c.id))
    texts = ["one", "one", "two"]
    await jobs.settle_many("w", [jobs.Settle(c, RESULT, content(text)) for c, text in zip(claimed, texts, strict=True)])
    found = {str(r.id): (r.evidence_id, r.evidence_revision)  # type: ignore[attr-defined]
             for r in await Receipt.filter(id__in=[c.id for c in claimed])}
    assert [found[str(c.id)][1] for c in claimed] == [1, 1, 2]
    assert len({evidence_id for evidence_id, _ in found.values()}) == 1
    assert (await Evidence.get()).revision == 2


class SlowUntilReleased:
    """/slow answers once the test sets `release`; the other URLs at once."""

    capacity = 8

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def retrieve(self, url: str, kind: str, language: str | None = None) -> Retrieved:
        if url.endswith("/slow"):
            await self.release.wait()
        return Retrieved({"status": "unavailable", "reason": url}, None, None)


async def test_a_slow_receipt_holds_one_slot_while_the_others_keep_settling(store: str) -> None:
    await receipts.submit(request("https://example.com/slow", mutation_id=uuid.uuid4()))
    quick = await submitted(12)
    engine = SlowUntilReleased()
    worker = Worker(engine, WorkerSettings(concurrency=2, poll_interval=0.02))  # type: ignore[arg-type]
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:  # the slow one is never answered meanwhile: the quick ones cannot be waiting for it
        async def quick_settled() -> bool:
            return await Receipt.filter(id__in=[r.id for r in quick], state="completed").count() == len(quick)

        await until(quick_settled, what="the quick receipts, in the one slot the slow one leaves")
        assert await Receipt.filter(url="https://example.com/slow", state="running").count() == 1
    finally:
        engine.release.set()
        stop.set()
        await running
    assert await Receipt.filter(state="completed").count() == len(quick) + 1
