"""An engine with its resources (HTTP connections, parse processes) for as long as a server or worker runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from evidencekit.server.evidence.fetch.fetcher import Fetcher, FetchLimits, default_ssl_context
from evidencekit.server.evidence.parse.pool import HtmlParser
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine

if TYPE_CHECKING:
    from evidencekit.server.evidence.settings import EvidenceSettings


@asynccontextmanager
async def open_engine(parse_processes: int | None = None, fetch_limits: FetchLimits | None = None, *,
                      settings: EvidenceSettings | None = None) -> AsyncIterator[RetrievalEngine]:
    """`settings`: what the process read where it started (the egress policy, the CA bundle, the
    parse processes; the defaults without); `parse_processes` and `fetch_limits` (else FetchLimits())
    when given instead."""
    from evidencekit.server.evidence.settings import EvidenceSettings

    settings = settings or EvidenceSettings()
    fetcher = Fetcher(settings.egress, fetch_limits, ssl_context=default_ssl_context(settings.ca_bundle))
    parser = HtmlParser(settings.parse_processes if parse_processes is None else parse_processes)
    try:
        await parser.warm_up()
        yield RetrievalEngine(fetcher, parser=parser)
    finally:
        await fetcher.aclose()
        await asyncio.to_thread(parser.close)
