"""Lookups asked for during one turn of the event loop, answered together.

Status is the call agents poll, many at once. Each lookup on its own costs a statement: on SQLite
a read transaction (two file-lock system calls and the statement's setup), on PostgreSQL a pooled
connection and a round trip. The first lookup of a turn schedules the batch with `call_soon`, so
every request the loop already has in hand joins it before it runs; the batch then costs one
statement. Each batch starts after every request in it was asked, so every answer is at least as
fresh as a lookup of its own would have been.
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


class _Batch(Generic[K, V]):
    __slots__ = ("loop", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: dict[K, list[asyncio.Future[V | None]]] = {}


class TurnBatch(Generic[S, K, V]):
    """`get(scope, key)` answers with `now(scope, keys)` (synchronous, on the event loop) or, when
    that returns None, `later(scope, keys)`, called once for all keys asked in the same turn.
    A key that neither gives a value for is answered None."""

    def __init__(self, now: AnswerNow[S, K, V], later: AnswerLater[S, K, V]) -> None:
        self._now, self._later = now, later
        self._open: dict[tuple[int, S], _Batch[K, V]] = {}
        self._running: set[asyncio.Task[None]] = set()

    def get(self, scope: S, key: K) -> asyncio.Future[V | None]:
        # Keyed by thread, not by asyncio.get_running_loop(), which makes a getpid() system call
        # on every call (Python 3.11): one per batch here. A thread runs one loop at a time, so a
        # batch whose loop is no longer running was left by a loop that stopped before its turn
        # ended, and is replaced.
        slot = (threading.get_ident(), scope)
        batch = self._open.get(slot)
        if batch is None or not batch.loop.is_running():
            batch = self._open[slot] = _Batch(asyncio.get_running_loop())
            batch.loop.call_soon(self._close, slot, batch)
        future: asyncio.Future[V | None] = batch.loop.create_future()
        waiters = batch.waiting.get(key)
        if waiters is None:
            batch.waiting[key] = [future]
        else:
            waiters.append(future)
        return future

    def _close(self, slot: tuple[int, S], batch: _Batch[K, V]) -> None:
        if self._open.get(slot) is batch:
            del self._open[slot]
        waiting, scope = batch.waiting, slot[1]
        try:
            found = self._now(scope, list(waiting))
        except Exception as exc:  # noqa: BLE001 - every waiter gets it, as a lookup of its own would
            _fail(waiting, exc)
            return
        if found is not None:
            _resolve(waiting, found)
            return
        task = batch.loop.create_task(self._answer_later(scope, waiting))
        self._running.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._running.discard)

    async def _answer_later(self, scope: S, waiting: dict[K, list[asyncio.Future[V | None]]]) -> None:
        try:
            found = await self._later(scope, list(waiting))
        except asyncio.CancelledError:
            for waiters in waiting.values():
                for future in waiters:
                    future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - handed to every waiter
            _fail(waiting, exc)
            return
        _resolve(waiting, found)


def _resolve(waiting: dict[K, list[asyncio.Future[V | None]]], found: dict[K, V]) -> None:
    for key, waiters in waiting.items():
        value = found.get(key)
        for future in waiters:
            if not future.done():  # a waiter that went away (cancelled) is skipped
                future.set_result(value)


def _fail(waiting: dict[K, list[asyncio.Future[V | None]]], exc: Exception) -> None:
    for waiters in waiting.values():
        for future in waiters:
            if not future.done():
                future.set_exception(exc)
