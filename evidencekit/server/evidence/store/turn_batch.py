"""Lookups asked for during one turn of the event loop, answered together.

Status is the call agents poll, many at once. Each lookup on its own costs a statement: on SQLite
a read transaction (two file-lock system calls and the statement's setup), on PostgreSQL a pooled
connection and a round trip. The first lookup of a turn schedules the batch with `call_soon`, so
every request the loop already has in hand joins it before it runs; the batch then costs one
statement. Each batch starts after every request in it was asked, so every answer is at least as
fresh as a lookup of its own would have been.

A batch that must wait for its answer (a round trip to PostgreSQL) is not followed by another
while it is out: lookups asked meanwhile gather into the next batch, which goes when the answer is
back. Under load that makes a few large statements instead of many small ones (on PostgreSQL
under wrk, 41% of batches had been single lookups), and it costs a lookup at most one round trip
of waiting.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

S = TypeVar("S", bound=Hashable)  # what the lookups run against (one store)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

AnswerNow = Callable[[S, list[K]], "dict[K, V] | None"]  # None: cannot answer without waiting
AnswerLater = Callable[[S, list[K]], Awaitable["dict[K, V]"]]
Slot = tuple[int, S]  # (thread, scope): a thread runs one event loop at a time


class _Batch(Generic[K, V]):
    __slots__ = ("loop", "waiting", "turn_over")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: dict[K, list[asyncio.Future[V | None]]] = {}
        self.turn_over = False  # its turn ended while another batch's answer was still out


class TurnBatch(Generic[S, K, V]):
    """`get(scope, key)` answers with `now(scope, keys)` (synchronous, on the event loop) or, when
    that returns None, `later(scope, keys)`, called once for all keys asked in the same turn.
    A key that neither gives a value for is answered None."""

    def __init__(self, now: AnswerNow[S, K, V], later: AnswerLater[S, K, V]) -> None:
        self._now, self._later = now, later
        self._open: dict[Slot[S], _Batch[K, V]] = {}
        self._out: dict[Slot[S], asyncio.AbstractEventLoop] = {}  # a `later` answer still to come
        self._running: set[asyncio.Task[None]] = set()

    def get(self, scope: S, key: K) -> asyncio.Future[V | None]:
        # Keyed by thread, not by asyncio.get_running_loop(), which makes a getpid() system call
        # on every call (Python 3.11): one per batch here. A batch whose loop is no longer running
        # was left by a loop that stopped before its turn ended, and is replaced.
        slot = (threading.get_ident(), scope)
        batch = self._open.get(slot)
        if batch is None or not batch.loop.is_running():
            batch = self._open[slot] = _Batch(asyncio.get_running_loop())
            batch.loop.call_soon(self._end_of_turn, slot, batch)
        future: asyncio.Future[V | None] = batch.loop.create_future()
        waiters = batch.waiting.get(key)
        if waiters is None:
            batch.waiting[key] = [future]
        else:
            waiters.append(future)
        return future

    def _end_of_turn(self, slot: Slot[S], batch: _Batch[K, V]) -> None:
        if self._open.get(slot) is not batch:
            return
        if self._out.get(slot) is batch.loop:  # it goes, with what joins it meanwhile, when that is back
            batch.turn_over = True
            return
        del self._open[slot]
        self._answer(slot, batch)

    def _answer(self, slot: Slot[S], batch: _Batch[K, V]) -> None:
        waiting, scope = batch.waiting, slot[1]
        try:
            found = self._now(scope, list(waiting))
        except Exception as exc:  # noqa: BLE001 - every waiter gets it, as a lookup of its own would
            _fail(waiting, exc)
            return
        if found is not None:
            _resolve(waiting, found)
            return
        self._out[slot] = batch.loop
        task = batch.loop.create_task(self._answer_later(slot, batch))
        self._running.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._running.discard)

    async def _answer_later(self, slot: Slot[S], batch: _Batch[K, V]) -> None:
        waiting, cancelled = batch.waiting, False
        try:
            found = await self._later(slot[1], list(waiting))
        except asyncio.CancelledError:  # the loop is shutting down, or someone cancelled every task
            cancelled = True
            _cancel(waiting)
            raise
        except Exception as exc:  # noqa: BLE001 - handed to every waiter
            _fail(waiting, exc)
        else:
            _resolve(waiting, found)
        finally:
            self._after(slot, batch, cancelled=cancelled)

    def _after(self, slot: Slot[S], batch: _Batch[K, V], *, cancelled: bool) -> None:
        """The answer to `batch` is in: the batch queued behind it (if any) goes now; with the
        answer cancelled, its lookups are cancelled too, as nothing else would ever send it."""
        if self._out.get(slot) is batch.loop:
            del self._out[slot]
        queued = self._open.get(slot)
        if queued is None or not queued.turn_over:
            return
        del self._open[slot]
        if cancelled:
            _cancel(queued.waiting)
        else:
            self._answer(slot, queued)

    def forget(self, scope: S) -> None:
        """Drop what is kept for `scope` (a store that closed): its batches not yet answered are
        cancelled, and nothing of it stays referenced."""
        for slot in [slot for slot in self._open if slot[1] == scope]:
            batch = self._open.pop(slot)
            if not batch.loop.is_closed():  # else its waiters went with their loop
                _cancel(batch.waiting)
        for slot in [slot for slot in self._out if slot[1] == scope]:
            del self._out[slot]


def _resolve(waiting: dict[K, list[asyncio.Future[V | None]]], found: dict[K, V]) -> None:
    for key, waiters in waiting.items():
        value = found.get(key)
        for future in waiters:
            if not future.done():  # a waiter that went away (cancelled) is skipped
                future.set_result(value)


def _cancel(waiting: dict[K, list[asyncio.Future[V | None]]]) -> None:
    for waiters in waiting.values():
        for future in waiters:
            future.cancel()


def _fail(waiting: dict[K, list[asyncio.Future[V | None]]], exc: Exception) -> None:
    for waiters in waiting.values():
        for future in waiters:
            if not future.done():
                future.set_exception(exc)
