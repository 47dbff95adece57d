"""The auth cache under concurrency: one load per expired key, however many requests miss at once."""

from __future__ import annotations

import asyncio

import pytest

from evidencekit.server.evidence.store.ttl_cache import TTLCache
from tests.support import ManualClock

pytestmark = pytest.mark.anyio


class CountingLoader:
    def __init__(self, value: str | None = "role", fail: bool = False) -> None:
        self.calls = 0
        self.value, self.fail = value, fail
        self.release = asyncio.Event()

    async def __call__(self) -> str | None:
        self.calls += 1
        await self.release.wait()
        if self.fail:
            raise RuntimeError("database is down")
        return self.value


async def test_concurrent_misses_share_one_load() -> None:
    cache: TTLCache[str] = TTLCache(ttl=60)
    load = CountingLoader()
    waiting = [asyncio.create_task(cache.get("key", load)) for _ in range(32)]
    await asyncio.sleep(0)
    load.release.set()
    assert await asyncio.gather(*waiting) == ["role"] * 32
    assert load.calls == 1
    assert await cache.get("key", load) == "role" and load.calls == 1  # now a hit


async def test_a_caller_that_goes_away_does_not_cancel_the_others() -> None:
    cache: TTLCache[str] = TTLCache(ttl=60)
    load = CountingLoader()
    first = asyncio.create_task(cache.get("key", load))
    second = asyncio.create_task(cache.get("key", load))
    await asyncio.sleep(0)
    first.cancel()
    load.release.set()
    assert await second == "role"
    assert first.cancelled() and load.calls == 1


async def test_failures_reach_every_waiter_and_are_not_cached() -> None:
    cache: TTLCache[str] = TTLCache(ttl=60)
    load = CountingLoader(fail=True)
    waiting = [asyncio.create_task(cache.get("key", load)) for _ in range(3)]
    await asyncio.sleep(0)
    load.release.set()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(result, RuntimeError) for result in results) and load.calls == 1
    load.fail = False
    assert await cache.get("key", load) == "role" and load.calls == 2


async def test_misses_are_not_cached_and_entries_expire() -> None:
    clock = ManualClock()
    cache: TTLCache[str] = TTLCache(ttl=5, clock=clock)
    missing = CountingLoader(value=None)
    missing.release.set()
    assert await cache.get("key", missing) is None
    assert await cache.get("key", missing) is None and missing.calls == 2
    present = CountingLoader()
    present.release.set()
    assert await cache.get("other", present) == "role"
    clock.advance(4.9)
    assert await cache.get("other", present) == "role" and present.calls == 1  # still fresh
    clock.advance(0.2)
    assert await cache.get("other", present) == "role" and present.calls == 2  # expired: loaded again


async def test_clear_drops_loads_already_running() -> None:
    cache: TTLCache[str] = TTLCache(ttl=60)
    stale = CountingLoader(value="before")
    first = asyncio.create_task(cache.get("key", stale))
    await asyncio.sleep(0)
    cache.clear()  # e.g. a token was revoked while its lookup was in flight
    fresh = CountingLoader(value="after")
    fresh.release.set()
    assert await cache.get("key", fresh) == "after"  # not joined to the earlier load
    stale.release.set()
    assert await first == "before"
    assert await cache.get("key", fresh) == "after" and fresh.calls == 1  # the earlier load was not stored


async def test_peek_sees_only_fresh_values() -> None:
    clock = ManualClock()
    cache: TTLCache[str] = TTLCache(ttl=5, clock=clock)
    assert cache.peek("key") is None
    load = CountingLoader()
    load.release.set()
    assert await cache.get("key", load) == "role"
    assert cache.peek("key") == "role"
    clock.advance(6)
    assert cache.peek("key") is None  # expired: the caller must load again
    assert TTLCache[str](ttl=0).peek("key") is None


async def test_no_entry_outlives_the_expiry_its_value_carries() -> None:
    clock = ManualClock()
    cache: TTLCache[float] = TTLCache(ttl=60, expiry=lambda ends: ends, clock=clock)
    ends = clock.time() + 2  # a token valid for 2 more seconds
    load = CountingLoader()
    load.value = ends  # type: ignore[assignment]
    load.release.set()
    assert await cache.get("token", load) == ends  # type: ignore[arg-type]
    clock.advance(1.9)
    assert cache.peek("token") == ends
    clock.advance(0.2)
    assert cache.peek("token") is None  # its 60 s time to live did not keep it
