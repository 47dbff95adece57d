"""A small per-process cache with a time to live, for the lookups every request repeats.

What it holds may be up to `ttl` seconds stale: a revoked token or a changed role takes effect
within that time (EVIDENCEKIT_AUTH_CACHE_SECONDS, default 5; 0 turns caching off: read by
settings.EvidenceSettings where the process starts, never here).

Concurrent misses of one key share one load: when an entry expires under load, every request in
flight misses at once, and without this each ran its own database lookup (32 clients: latency
spikes of ~400 ms every `ttl` seconds in scripts/bench.py status).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")
TTL_ENV = "EVIDENCEKIT_AUTH_CACHE_SECONDS"
DEFAULT_TTL = 5.0


class Clock(Protocol):
    """Where a cache reads the time: `monotonic()` for its time to live, `time()` (Unix time) for
    the expiry a value carries. Tests give one they move by hand instead of sleeping."""

    def monotonic(self) -> float: ...

    def time(self) -> float: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()


SYSTEM_CLOCK = SystemClock()


class TTLCache(Generic[V]):
    """`expiry(value)`: when a value stops being valid by itself (Unix time; None: never), so no
    entry outlives it (a token's expiry)."""

    def __init__(self, ttl: float = DEFAULT_TTL, max_entries: int = 10_000,
                 expiry: Callable[[V], float | None] | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.expiry = expiry
        self.clock = clock
        self._entries: dict[Hashable, tuple[float, V]] = {}
        self._loading: dict[Hashable, asyncio.Task[V | None]] = {}
        self._generation = 0  # bumped by clear(): a load started before it must not be stored

    def peek(self, key: Hashable) -> V | None:
        """The cached value when there is a fresh one, without waiting (every request asks)."""
        hit = self._entries.get(key)
        return hit[1] if hit is not None and hit[0] > self.clock.monotonic() else None

    async def get(self, key: Hashable, load: Callable[[], Awaitable[V | None]]) -> V | None:
        """The cached value, or `load()`'s; misses (None) are not cached, so new grants work at once."""
        if self.ttl <= 0:
            return await load()
        hit = self._entries.get(key)
        if hit is not None and hit[0] > self.clock.monotonic():
            return hit[1]
        task = self._loading.get(key)
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            task = asyncio.ensure_future(load())
            self._loading[key] = task
            generation = self._generation
            task.add_done_callback(lambda done: self._settle(key, done, generation))
        # shielded: a caller that goes away does not cancel the load the others wait for
        return await asyncio.shield(task)

    def _settle(self, key: Hashable, task: asyncio.Task[V | None], generation: int) -> None:
        if self._loading.get(key) is task:
            del self._loading[key]
        if task.cancelled() or task.exception() is not None or generation != self._generation:
            return
        value = task.result()
        if value is not None:
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            now = self.clock.monotonic()
            until = now + self.ttl
            ends = self.expiry(value) if self.expiry is not None else None
            if ends is not None:
                until = min(until, now + (ends - self.clock.time()))
            self._entries[key] = (until, value)

    def clear(self) -> None:
        """Forget every entry; loads already running are not joined or stored any more."""
        self._generation += 1
        self._entries.clear()
        self._loading.clear()
