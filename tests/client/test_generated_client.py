"""The generated client against the generated server skeleton, over real HTTP on loopback."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from evidencekit.client.generated.client import AsyncClient, Client
from evidencekit.client.generated.models import RetrieveInput, RetrieveOutput, StatusOutput
from evidencekit.client.runtime import _errors as errors
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


class NotingHandlers(ExampleHandlers):
    """Adds two notes to every status answer: one plain, one with what a header cannot carry as is."""

    async def status(self, payload: Any, context: Any) -> StatusOutput:
        context.notes.extend(["Poll again in a second.", "Größe: 100 % — über\u00a0alles, a, b"])
        return await super().status(payload, context)


def test_a_handlers_notes_reach_a_rest_caller_as_headers_and_the_client_reads_them() -> None:
    """RequestContext.notes (MCP: text after the JSON) travel over REST as X-Note headers, one per
    note, the body still the contract's alone; the client gives them back exactly."""
    with live_server(skeleton_app(NotingHandlers())) as url:
        body = {"workspace_id": WORKSPACE, "mutation_id": MUTATION}
        raw = httpx.post(url + "/research-api/evidence/status", json=body)
        assert raw.status_code == 200 and set(raw.json()) == {"retrieval"}
        assert raw.headers.get_list("x-note")[0] == "Poll again in a second."
        assert all(value.isascii() for value in raw.headers.get_list("x-note"))
        with Client(url) as client:
            client.status(body)
            assert client.notes == ["Poll again in a second.", "Größe: 100 % — über\u00a0alles, a, b"]
            client.retrieve({"url": "https://example.com/a", "kind": "url_text", **body})
            assert client.notes == []  # the last answer's, not an earlier one's
