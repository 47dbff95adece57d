from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from evidencekit.server.evidence.fetch.fetcher import Fetcher, FetchLimits
from evidencekit.server.evidence.fetch.policy import EgressPolicy, parse_allowlist
from evidencekit.server.evidence.retrieval.engine import RetrievalEngine
from evidencekit.server.evidence.retrieval.result_check import result_violations
from tests.origin import LocalCA, Origin
from tests.server.conftest import fake_resolver


def contract_errors(result: dict[str, Any]) -> list[str]:
    """Violations of every published output variant, for a result placed in a receipt."""
    return [f"[{e.variant}] {e.path}: {e.message}" for e in result_violations(result)]


@pytest.fixture
def site(origin: Origin) -> Origin:
    return origin


@pytest.fixture
async def engine(site: Origin, tls: LocalCA) -> AsyncIterator[RetrievalEngine]:
    port = int(site.url.rsplit(":", 1)[1])
    limits = FetchLimits(max_bytes=256 * 1024, connect_timeout=2, read_timeout=1, deadline=3)
    fetcher = Fetcher(EgressPolicy(parse_allowlist(f"127.0.0.1:{port}")), limits,
                      ssl_context=tls.client_context(), resolver=fake_resolver)
    yield RetrievalEngine(fetcher)
    await fetcher.aclose()
