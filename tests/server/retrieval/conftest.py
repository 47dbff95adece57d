from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from contracts.validation import validator_for
from server.fetch.fetcher import Fetcher, FetchLimits
from server.fetch.policy import EgressPolicy, parse_allowlist
from server.retrieval.engine import RetrievalEngine
from tests.origin import LocalCA, Origin
from tests.server.conftest import fake_resolver

ENVELOPE = {
    "id": "30000000-0000-4000-8000-000000000007",
    "workspace_id": "11111111-1111-4111-8111-111111111111",
    "mutation_id": "40000000-0000-4000-8000-000000000001",
    "state": "completed",
    "created_at": "2099-01-15T09:00:00Z",
    "settled_at": "2099-01-15T09:00:01Z",
    "valid_until": "2099-01-16T09:00:00Z",
    "evidence": None,
}


def contract_errors(result: dict[str, Any]) -> list[str]:
    """Violations of every published output variant, for a result placed in a receipt."""
    retrieval = {**ENVELOPE, "kind": result["kind"], "result": result}
    errors = validator_for("sosoapi_research_evidence_retrieve").output_errors({"retrieval": retrieval})
    return [f"[{e.variant}] {e.path}: {e.message}" for e in errors]


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
