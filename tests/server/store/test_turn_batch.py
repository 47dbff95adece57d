"""Lookups of one event-loop turn are answered together, each waiter with its own answer."""

from __future__ import annotations

import asyncio

import pytest

from evidencekit.server.evidence.store.turn_batch import TurnBatch

pytestmark = pytest.mark.anyio


class Recorder:
    """Answers from a table and records every call it gets."""

    def __init__(self, table: dict[str, int], *, now: bool = True) -> None:
        self.table, self.answers_now = table, now
        self.now_calls: list[tuple[str, list[str]]] = []
        self.later_calls: list[tuple[str, list[str]]] = []

    def now(self, scope: str, keys: list[str]) -> dict[str, int] | None:
        self.now_calls.append((scope, keys))
        return {key: self.table[key] for key in keys if key in self.table} if self.answers_now else None

    async def later(self, scope: str, keys: list[str]) -> dict[str, int]:
        self.later_calls.append((scope, keys))
        await asyncio.sleep(0)
        return {key: self.table[key] for key in keys if key in self.table}


async def test_lookups_of_one_turn_take_one_call_and_each_gets_its_own_answer() -> None:
    recorder = Recorder({"a": 1, "b": 2})
    batch = TurnBatch(recorder.now, recorder.later)
    answers = await asyncio.gather(*(batch.get("store", key) for key in ["a", "b", "a", "missing"]))
    assert answers == [1, 2, 1, None]
    assert recorder.now_calls == [("store", ["a", "b", "missing"])]  # a key asked twice is read once
    assert recorder.later_calls == []


async def test_lookups_of_later_turns_are_read_again() -> None:
    recorder = Recorder({"a": 1})
    batch = TurnBatch(recorder.now, recorder.later)
    assert await batch.get("store", "a") == 1
    recorder.table["a"] = 5  # changed between the turns: the second lookup must see it
    assert await batch.get("store", "a") == 5
    assert len(recorder.now_calls) == 2


async def test_each_scope_is_read_on_its_own() -> None:
    recorder = Recorder({"a": 1})
    batch = TurnBatch(recorder.now, recorder.later)
    assert await asyncio.gather(batch.get("one", "a"), batch.get("two", "a")) == [1, 1]
    assert sorted(recorder.now_calls) == [("one", ["a"]), ("two", ["a"])]


async def test_what_cannot_be_answered_at_once_is_answered_later_in_one_call() -> None:
    recorder = Recorder({"a": 1, "b": 2}, now=False)
    batch = TurnBatch(recorder.now, recorder.later)
    assert await asyncio.gather(batch.get("store", "a"), batch.get("store", "b")) == [1, 2]
    assert recorder.later_calls == [("store", ["a", "b"])]


@pytest.mark.parametrize("answers_now", [True, False])
async def test_a_failed_read_fails_every_waiter_of_its_batch(answers_now: bool) -> None:
    def now(scope: str, keys: list[str]) -> dict[str, int] | None:
        if answers_now:
            raise ConnectionError("database gone")
        return None

    async def later(scope: str, keys: list[str]) -> dict[str, int]:
        raise ConnectionError("database gone")

    batch: TurnBatch[str, str, int] = TurnBatch(now, later)
    results = await asyncio.gather(batch.get("s", "a"), batch.get("s", "b"), return_exceptions=True)
    assert [type(result) for result in results] == [ConnectionError, ConnectionError]


async def test_a_waiter_that_goes_away_leaves_the_others_their_answer() -> None:
    recorder = Recorder({"a": 1}, now=False)
    batch = TurnBatch(recorder.now, recorder.later)
    leaving = asyncio.ensure_future(batch.get("s", "a"))
    staying = asyncio.ensure_future(batch.get("s", "a"))
    await asyncio.sleep(0)
    leaving.cancel()
    assert await staying == 1
    assert leaving.cancelled()


def test_a_batch_left_by_a_stopped_loop_does_not_hold_up_the_next_loop() -> None:
    recorder = Recorder({"a": 1})
    batch = TurnBatch(recorder.now, recorder.later)

    async def ask_and_leave() -> None:
        # asked in the loop's last turn: it stops before the turn that would answer it
        asyncio.get_running_loop().call_soon(batch.get, "store", "a")

    first = asyncio.new_event_loop()
    first.run_until_complete(ask_and_leave())
    first.close()
    assert recorder.now_calls == []

    async def ask() -> int | None:
        return await asyncio.wait_for(batch.get("store", "a"), timeout=5)

    assert asyncio.run(ask()) == 1


class Gated(Recorder):
    """Answers later, when released: a round trip that takes a while."""

    def __init__(self, table: dict[str, int], *, fail_first: bool = False) -> None:
        super().__init__(table, now=False)
        self.release = asyncio.Event()
        self.fail_first = fail_first

    async def later(self, scope: str, keys: list[str]) -> dict[str, int]:
        self.later_calls.append((scope, keys))
        await self.release.wait()
        if self.fail_first and len(self.later_calls) == 1:
            raise ConnectionError("database gone")
        return {key: self.table[key] for key in keys if key in self.table}


@pytest.mark.parametrize("fail_first", [False, True])
async def test_lookups_asked_while_an_answer_is_out_go_together_when_it_is_back(fail_first: bool) -> None:
    recorder = Gated({"a": 1, "b": 2, "c": 3}, fail_first=fail_first)
    batch = TurnBatch(recorder.now, recorder.later)
    first = asyncio.ensure_future(batch.get("s", "a"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # the first batch is out
    second = asyncio.ensure_future(batch.get("s", "b"))
    await asyncio.sleep(0)
    third = asyncio.ensure_future(batch.get("s", "c"))  # asked in another turn, while still out
    await asyncio.sleep(0)
    assert recorder.later_calls == [("s", ["a"])]
    recorder.release.set()
    assert await asyncio.gather(second, third) == [2, 3]
    assert recorder.later_calls == [("s", ["a"]), ("s", ["b", "c"])]
    if fail_first:
        with pytest.raises(ConnectionError):
            await first
    else:
        assert await first == 1


async def test_a_cancelled_answer_leaves_no_lookup_stuck_behind_it() -> None:
    """Cancelling the read in flight (a loop shutting down does; so may code that cancels every
    task) cancels the lookups queued behind it, and lookups asked afterwards are answered."""
    recorder = Gated({"a": 1, "b": 2, "c": 3})
    batch = TurnBatch(recorder.now, recorder.later)
    first = asyncio.ensure_future(batch.get("s", "a"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # the first batch is out
    queued = asyncio.ensure_future(batch.get("s", "b"))
    await asyncio.sleep(0)  # its turn ended while the first answer is out: it waits for it
    for task in list(batch._running):
        task.cancel()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert first.cancelled() and queued.cancelled()
    recorder.release.set()
    assert await asyncio.wait_for(batch.get("s", "c"), timeout=5) == 3


async def test_a_forgotten_scope_keeps_nothing_and_cancels_what_it_had_not_answered() -> None:
    recorder = Gated({"a": 1, "b": 2})
    batch = TurnBatch(recorder.now, recorder.later)
    first = asyncio.ensure_future(batch.get("s", "a"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    queued = asyncio.ensure_future(batch.get("s", "b"))
    await asyncio.sleep(0)
    other = asyncio.ensure_future(batch.get("t", "a"))  # another store: not touched
    batch.forget("s")
    assert queued.cancelled()
    recorder.release.set()
    assert await first == 1  # the read already out still answers its own
    assert await other == 1
    assert batch._open == {} and batch._out == {}
    assert await asyncio.wait_for(batch.get("s", "b"), timeout=5) == 2
