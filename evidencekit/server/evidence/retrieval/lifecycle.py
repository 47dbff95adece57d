"""An engine with its resources (HTTP connections, parse processes) for as long as a server or worker runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from evidencekit.server.evidence.fetch.fetcher import Fetcher, FetchLimits
from evidencekit.server.evidence.parse.pool import HtmlParser, processes_from_env
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine


@asynccontextmanager
async def open_engine(parse_processes: int | None = None,
                      fetch_limits: FetchLimits | None = None) -> AsyncIterator[RetrievalEngine]:
    """`fetch_limits`: the fetcher's own (FetchLimits()) unless given."""
    fetcher = Fetcher(limits=fetch_limits)
    parser = HtmlParser(processes_from_env() if parse_processes is None else parse_processes)
    try:
        await parser.warm_up()
        yield RetrievalEngine(fetcher, parser=parser)
    finally:
        await fetcher.aclose()
        await asyncio.to_thread(parser.close)
