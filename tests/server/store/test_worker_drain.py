"""One workspace's backlog drains at the rate pages are fetched and read, not at the poll interval:
a worker claims again as soon as one of its slots frees, on both databases."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from evidencekit.server.evidence.fetch.fetcher import Fetcher
from evidencekit.server.evidence.fetch.policy import EgressPolicy, parse_allowlist
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine
from evidencekit.server.evidence.store import jobs
from evidencekit.server.evidence.store.models import Receipt
from evidencekit.server.evidence.store.receipts import RetrieveRequest, submit
from evidencekit.server.evidence.worker import Worker, WorkerSettings
from tests.origin import Origin, Reply
from tests.server.conftest import fake_resolver

pytestmark = pytest.mark.anyio
PAGE = b"<html lang='en'><head><title>Batch</title></head><body><p>One page of a batch.</p></body></html>"
BACKLOG = 24  # six turns of the worker's four regular slots
POLL = 60.0  # a poll per slot turn would take minutes
SETTLED_WITHIN = 20.0  # generous for 24 loopback pages; far below one poll interval


@pytest.fixture
async def engine(plain_origin: Origin) -> AsyncIterator[RetrievalEngine]:
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{plain_origin.url.rsplit(':', 1)[1]}")),
                      resolver=fake_resolver)
    yield RetrievalEngine(fetcher)
    await fetcher.aclose()


class Watched:
    """Counts the worker's claims and settles (the real ones run); `all_settled` is set once
    `expected` receipts have settled."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, expected: int) -> None:
        self.expected, self.claims, self.settles = expected, 0, 0
        self.settled: set[str] = set()
        self.all_settled = asyncio.Event()
        real_claim, real_settle = jobs.claim_many, jobs.settle_many

        async def claim_many(*args: object, **kwargs: object) -> list[jobs.Claimed]:
            self.claims += 1
            return await real_claim(*args, **kwargs)  # type: ignore[arg-type]

        async def settle_many(worker_id: str, settles: Sequence[jobs.Settle], **kwargs: object) -> set[str]:
            self.settles += 1
            done = await real_settle(worker_id, settles, **kwargs)  # type: ignore[arg-type]
            self.settled |= done
            if len(self.settled) >= self.expected:
                self.all_settled.set()
            return done

        monkeypatch.setattr(jobs, "claim_many", claim_many)
        monkeypatch.setattr(jobs, "settle_many", settle_many)


async def test_one_workspaces_backlog_settles_without_waiting_a_poll_interval_per_turn(
        store: str, plain_origin: Origin, engine: RetrievalEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace, batch = uuid.uuid4(), uuid.uuid4().hex
    made = [await submit(RetrieveRequest(workspace, uuid.uuid4(),
                                         plain_origin.reply(f"/{batch}/{n}", Reply(PAGE)), "url_text"))
            for n in range(BACKLOG)]
    watched = Watched(monkeypatch, BACKLOG)
    worker = Worker(engine, WorkerSettings(lease=timedelta(seconds=60), poll_interval=POLL, concurrency=4))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await asyncio.wait_for(watched.all_settled.wait(), SETTLED_WITHIN)
    except TimeoutError:
        pytest.fail(f"{len(watched.settled)} of {BACKLOG} settled: the worker waited out its poll interval")
    finally:
        stop.set()
        await running
    receipts = await Receipt.filter(id__in=[receipt.id for receipt, _ in made])
    assert {(receipt.state, (receipt.result or {}).get("status")) for receipt in receipts} == {("completed", "ready")}
    # no busy loop: every claim but the first followed a slot coming free (a retrieval ending, or a
    # settle making room for more finished receipts)
    assert watched.claims <= BACKLOG + watched.settles + 1


def test_a_settle_wakes_the_claimer_only_when_a_claim_could_find_more() -> None:
    """A settle in a workspace with another receipt still in hand frees no slot and makes no fair
    choice: the claimer sleeps on (in a 1,000-page drain on PostgreSQL a third of the claims had
    come back empty, each woken by a settle: 1.48 claim statements a page, 0.95 since). A settle
    that leaves a workspace with nothing in hand, or a retrieval given up, wakes it."""
    from types import SimpleNamespace

    from evidencekit.server.evidence.worker import _Hand

    hand = _Hand(Worker(SimpleNamespace(capacity=4, spare_capacity=2)))  # type: ignore[arg-type]
    mine, other = uuid.uuid4(), uuid.uuid4()
    now = datetime.now(UTC)
    a, b, c = (jobs.Claimed(uuid.uuid4(), workspace, "https://a.example/", "url_text", None, 1, str(uuid.uuid4()),
                            now, now) for workspace in (mine, mine, other))
    hand.held = {str(receipt.id): receipt for receipt in (a, b, c)}
    hand.retrieving = {str(b.id)}  # a and c wait to be settled, b is still fetched
    hand._drop([str(a.id)])
    assert not hand.freed.is_set()
    hand._drop([str(c.id)])  # nothing of `other` left here: its next receipt may be a fair choice
    assert hand.freed.is_set()
    hand.freed.clear()
    hand._drop([str(b.id)])  # a retrieval given up: its slot is free
    assert hand.freed.is_set()


async def test_the_next_page_is_fetched_while_the_last_one_is_written(
        store: str, plain_origin: Origin, engine: RetrievalEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A slot frees when its retrieval ends: with one slot, the second receipt's page is fetched
    while the first one's settle is still writing."""
    workspace, batch = uuid.uuid4(), uuid.uuid4().hex
    for n in range(2):
        await submit(RetrieveRequest(workspace, uuid.uuid4(), plain_origin.reply(f"/{batch}/{n}", Reply(PAGE)),
                                     "url_text"))
    writing, written, second_fetched = asyncio.Event(), asyncio.Event(), asyncio.Event()
    real_settle, real_retrieve = jobs.settle_many, engine.retrieve
    fetched: list[str] = []

    async def settle_many(worker_id: str, settles: Sequence[jobs.Settle], **kwargs: object) -> set[str]:
        writing.set()
        await written.wait()
        return await real_settle(worker_id, settles, **kwargs)  # type: ignore[arg-type]

    async def retrieve(url: str, *args: object, **kwargs: object) -> object:
        fetched.append(url)
        if len(fetched) == 2:
            second_fetched.set()
        return await real_retrieve(url, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jobs, "settle_many", settle_many)
    monkeypatch.setattr(engine, "retrieve", retrieve)
    worker = Worker(engine, WorkerSettings(lease=timedelta(seconds=60), poll_interval=POLL, concurrency=1, spare=0))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await asyncio.wait_for(writing.wait(), SETTLED_WITHIN)
        try:
            await asyncio.wait_for(second_fetched.wait(), SETTLED_WITHIN)
        except TimeoutError:
            pytest.fail("the one slot stayed taken while the first receipt was written")
        assert not written.is_set()
    finally:
        written.set()
        stop.set()
        await running


async def test_on_postgresql_a_second_batch_is_written_while_the_first_is(
        postgres_url: str, plain_origin: Origin, engine: RetrievalEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL takes settles side by side (jobs.settles_at_once): while one batch's transaction
    is still open, the next finished receipt is written by a second one, not queued behind it."""
    from evidencekit.server.evidence.store.db import open_store

    async with open_store(postgres_url):
        workspace, batch = uuid.uuid4(), uuid.uuid4().hex
        for n in range(2):
            await submit(RetrieveRequest(workspace, uuid.uuid4(), plain_origin.reply(f"/{batch}/{n}", Reply(PAGE)),
                                         "url_text"))
        first_open, second_open, release = asyncio.Event(), asyncio.Event(), asyncio.Event()
        real_settle = jobs.settle_many

        async def settle_many(worker_id: str, settles: Sequence[jobs.Settle], **kwargs: object) -> set[str]:
            if not first_open.is_set():
                first_open.set()
                await release.wait()
            else:
                second_open.set()
            return await real_settle(worker_id, settles, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(jobs, "settle_many", settle_many)
        worker = Worker(engine, WorkerSettings(lease=timedelta(seconds=60), poll_interval=POLL, concurrency=1,
                                               spare=0))
        stop = asyncio.Event()
        running = asyncio.create_task(worker.run(stop))
        try:
            await asyncio.wait_for(first_open.wait(), SETTLED_WITHIN)
            try:
                await asyncio.wait_for(second_open.wait(), SETTLED_WITHIN)
            except TimeoutError:
                pytest.fail("the second receipt waited for the first one's settle")
        finally:
            release.set()
            stop.set()
            await running
        assert {receipt.state for receipt in await Receipt.filter(workspace_id=workspace)} == {"completed"}


async def test_a_pages_index_words_are_read_in_the_parse_process_not_by_the_settle(
        store: str, plain_origin: Origin, monkeypatch: pytest.MonkeyPatch) -> None:
    """The words search_documents finds a fetched page by are read in a parse process with the page
    (HtmlParser.index): the settle, on the server's event loop, writes them without reading them
    again (here it cannot: reading them in this process fails), and the page is found by them."""
    from evidencekit.server.evidence.parse.pool import HtmlParser
    from evidencekit.server.evidence.search_documents import search_documents
    from evidencekit.server.evidence.store.models import Workspace
    from tests.server.store.test_service import principal_in

    def not_here(title: str | None, text: str) -> object:
        raise AssertionError("index words read in the server process")

    monkeypatch.setattr(jobs, "entry_words", not_here)
    parser = HtmlParser(1)
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{plain_origin.url.rsplit(':', 1)[1]}")),
                      resolver=fake_resolver)
    lab = await Workspace.create(name="lab")
    page = b"<html lang='de'><title>Reiher</title><body><p>Die Graureiher am Teich.</p></body></html>"
    await submit(RetrieveRequest(lab.id, uuid.uuid4(), plain_origin.reply(f"/{uuid.uuid4().hex}", Reply(page)),
                                 "url_text"))
    watched = Watched(monkeypatch, 1)
    worker = Worker(RetrievalEngine(fetcher, parser=parser), WorkerSettings(poll_interval=POLL))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        await asyncio.wait_for(watched.all_settled.wait(), SETTLED_WITHIN)
    finally:
        stop.set()
        await running
        await fetcher.aclose()
        parser.close()
    reader = await principal_in(lab, "reader", "viewer")
    [hit] = (await search_documents(reader, "graureiher"))["results"]
    assert hit["match"] == "exact"
