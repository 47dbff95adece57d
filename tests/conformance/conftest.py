"""The toolkit's conformance plugin, pointed at the real service (no worker: nothing is fetched)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from evidencekit.testing import Prepare, Target
from tests.support import running_service

# Every generated URL points at a closed loopback port: nothing leaves the machine.
NOWHERE = "http://127.0.0.1:9/"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("conformance"), worker=False,
                         env={"EVIDENCEKIT_RETRIEVE_PER_MINUTE": "100000"}) as running:
        yield running


@pytest.fixture(scope="module")
def conformance_target(server: dict[str, Any]) -> Target:
    return Target(server["base"], headers={"Authorization": f"Bearer {server['token']}"})


@pytest.fixture
def conformance_prepare(server: dict[str, Any]) -> Prepare:
    """Generated ids aimed at the caller's workspace, so answers are receipts and not only refusals;
    a fresh mutation per retrieve (a reused one with another input is, rightly, a conflict); no
    generated page_token (one this service did not issue is, rightly, refused)."""

    def prepare(operation: str, payload: dict[str, Any]) -> dict[str, Any]:
        if isinstance(payload, dict) and "workspace_id" in payload:
            payload = {**payload, "workspace_id": server["workspace_id"]}
        if isinstance(payload, dict) and "url" in payload:
            payload = {**payload, "url": NOWHERE + uuid.uuid4().hex, "mutation_id": str(uuid.uuid4())}
        if operation == "search_documents" and isinstance(payload, dict):
            payload = {key: value for key, value in payload.items() if key != "page_token"}
        return payload

    return prepare
