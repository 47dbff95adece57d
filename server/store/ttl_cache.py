"""A small per-process cache with a time to live, for the lookups every request repeats.

What it holds may be up to `ttl` seconds stale: a revoked token or a changed role takes effect
within that time (EVIDENCEKIT_AUTH_CACHE_SECONDS, default 5; 0 turns caching off).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")
TTL_ENV = "EVIDENCEKIT_AUTH_CACHE_SECONDS"


def ttl_from_env() -> float:
    return float(os.environ.get(TTL_ENV, "5"))


class TTLCache(Generic[V]):
    def __init__(self, ttl: float | None = None, max_entries: int = 10_000) -> None:
        self.ttl = ttl_from_env() if ttl is None else ttl
        self.max_entries = max_entries
        self._entries: dict[Hashable, tuple[float, V]] = {}

    async def get(self, key: Hashable, load: Callable[[], Awaitable[V | None]]) -> V | None:
        """The cached value, or `load()`'s; misses (None) are not cached, so new grants work at once."""
        if self.ttl <= 0:
            return await load()
        now = time.monotonic()
        hit = self._entries.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        value = await load()
        if value is not None:
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[key] = (now + self.ttl, value)
        return value

    def clear(self) -> None:
        self._entries.clear()
