"""What search_documents may take of the server at once, the same over REST, MCP over HTTP and
stdio (the handler holds it, not a transport).

- One credential has at most `per_credential` searches in progress (the MCP stream share,
  EVIDENCEKIT_MCP_STREAMS_PER_TOKEN, 8 by default: settings.EvidenceSettings); past it a search is refused, 429
  `too_many_searches` with `Retry-After: 1`. REST had no such bound: eight searches at once of
  one viewer held SQLite's one connection while other tenants' reads waited.
- At most `running` searches of all callers query the database at once; the others wait their
  turn, so a status read or a retrieve never queues behind more than that many.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Hashable

# One credential's share of the server, over /mcp (settings.McpOptions.streams) and for searches alike.
STREAMS_PER_TOKEN_ENV = "EVIDENCEKIT_MCP_STREAMS_PER_TOKEN"


class TooManySearches(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"this credential has {limit} searches in progress; wait for one to end")
        self.limit = limit


class SearchShare:
    def __init__(self, per_credential: int = 8, running: int = 2) -> None:
        self.per_credential = per_credential
        self.running = running
        self.open: Counter[Hashable] = Counter()
        self._turns: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:  # one per event loop (tests run several)
            self._turns = (loop, asyncio.Semaphore(self.running))
        return self._turns[1]

    @contextlib.asynccontextmanager
    async def turn(self, credential: Hashable) -> AsyncIterator[None]:
        """Hold one of the credential's searches and, once one is free, one of the running turns."""
        if self.open[credential] >= self.per_credential:
            raise TooManySearches(self.per_credential)
        self.open[credential] += 1
        try:
            async with self._semaphore():
                yield
        finally:
            self.open[credential] -= 1
            if self.open[credential] <= 0:
                del self.open[credential]
