"""The generated client against the generated server skeleton, over real HTTP on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from evidencekit.client.generated.client import AsyncClient, Client
from evidencekit.client.runtime import errors
from evidencekit.server.generated.models import RetrieveInput, RetrieveOutput, StatusOutput
from tests.support import ExampleHandlers, OtherContractHash, live_server, skeleton_app

WORKSPACE = "11111111-1111-4111-8111-111111111111"
MUTATION = "40000000-0000-4000-8000-000000000001"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with live_server(skeleton_app(ExampleHandlers())) as url:
        yield url


def test_sync_client_returns_typed_results(base_url: str) -> None:
    with Client(base_url, token="t0ken") as client:
        payload = RetrieveInput(url="https://example.com/a", kind="url_text",
                                workspace_id=uuid.UUID(WORKSPACE), mutation_id=uuid.UUID(MUTATION))
        result = client.retrieve(payload)
        assert isinstance(result, RetrieveOutput)
        assert str(result.retrieval.mutation_id) == MUTATION
        status = client.status({"workspace_id": WORKSPACE, "mutation_id": str(uuid.UUID(int=0))})
        assert isinstance(status, StatusOutput) and status.retrieval is None


@pytest.mark.anyio
async def test_async_client_returns_typed_results(base_url: str) -> None:
    async with AsyncClient(base_url) as client:
        result = await client.status({"workspace_id": WORKSPACE, "mutation_id": MUTATION})
        assert result.retrieval is not None and result.retrieval.state == "completed"


def test_errors_are_typed_with_code_and_request_id(base_url: str) -> None:
    with Client(base_url) as client, pytest.raises(errors.BadRequest) as caught:
        client.retrieve({"url": "x", "kind": "url_text", "workspace_id": WORKSPACE})
    error = caught.value
    assert (error.status, error.code) == (400, "validation_failed")
    assert error.request_id and {f["field"] for f in error.fields} == {"$.url", "$.mutation_id"}


def test_a_server_on_another_contract_version_is_caught() -> None:
    app = OtherContractHash(skeleton_app(ExampleHandlers()))
    with live_server(app) as url, Client(url) as client, pytest.raises(errors.ContractMismatch) as caught:
        client.status({"workspace_id": WORKSPACE, "mutation_id": MUTATION})
    assert "sha256:0000000000000000" in str(caught.value)


def test_an_unreachable_server_is_a_transport_error() -> None:
    with Client("http://127.0.0.1:9", timeout=2) as client, pytest.raises(errors.TransportError):
        client.status({"workspace_id": WORKSPACE, "mutation_id": MUTATION})
