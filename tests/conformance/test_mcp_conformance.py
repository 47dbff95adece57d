"""MCP conformance over Streamable HTTP and stdio with the official SDK client: generated valid
arguments get contract-valid structuredContent (against the pinned hashes), mutated arguments get
isError results, never a protocol error or a crash, and tools/list equals the published descriptors.
No worker runs retrievals here for HTTP; over stdio retrieval URLs point at a closed loopback port."""

from __future__ import annotations

import copy
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from evidencekit.contracts._loader import LOCK_NAME, load_operation, read_json
from evidencekit.contracts._validation import OperationValidator
from evidencekit.server.generated.mcp_tools import TOOLS_BY_NAME
from tests.conformance.test_rest_conformance import mutations
from tests.support import CONTRACTS_DIR, running_service

PINNED = {name: entry["contract_hash"] for name, entry in read_json(CONTRACTS_DIR / LOCK_NAME)["operations"].items()}
OPERATIONS = {name: load_operation(CONTRACTS_DIR / name) for name in PINNED}
VALIDATORS = {name: OperationValidator.of(op) for name, op in OPERATIONS.items()}
ROOT = Path(__file__).resolve().parents[2]
# Every generated URL is rewritten to this closed loopback port: nothing leaves the machine.
NOWHERE = "http://127.0.0.1:9/"
pytestmark = pytest.mark.anyio


def test_pins() -> None:
    assert {name: op.contract_hash for name, op in OPERATIONS.items()} == PINNED


def arguments_for(name: str, workspace: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = OPERATIONS[name].mcp_variant.input_schema  # type: ignore[union-attr]
    # Version-4 uuids: the REST variant, which every answer must also satisfy, admits versions 1-8 only.
    strategy = from_schema(schema, custom_formats={"uuid": st.uuids(version=4).map(str)})

    def aim(arguments: dict[str, Any]) -> dict[str, Any]:
        if "workspace_id" in arguments:
            arguments = {**arguments, "workspace_id": workspace}
        if "url" in arguments:  # a fresh mutation: a reused one with another input is (rightly) a conflict
            arguments = {**arguments, "url": NOWHERE + uuid.uuid4().hex, "mutation_id": str(uuid.uuid4())}
        return arguments

    return strategy.map(aim)


async def conformance(session: ClientSession, workspace: str) -> None:
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == set(PINNED)
    for name, tool in tools.items():
        wire = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert wire["inputSchema"] == TOOLS_BY_NAME[name]["inputSchema"]
        assert wire["annotations"] == TOOLS_BY_NAME[name]["annotations"]
    for name in PINNED:
        schema = OPERATIONS[name].mcp_variant.input_schema  # type: ignore[union-attr]
        for arguments in await generated(name, workspace, 12):
            result = await session.call_tool(name, arguments)
            if name == "get_documents":  # nothing is stored under generated names: a clear error
                assert result.is_error and "documents/" in result.content[0].text
                continue
            if "page_token" in arguments:  # a generated token names no page this service issued
                assert result.is_error and "unknown_page_token" in result.content[0].text
                continue
            assert not result.is_error, result.content
            assert VALIDATORS[name].output_errors(result.structured_content) == []
        for arguments in await generated(name, workspace, 4):
            for bad in mutations(copy.deepcopy(arguments), schema):
                result = await session.call_tool(name, bad)
                assert result.is_error and "validation_failed" in result.content[0].text, bad


async def generated(name: str, workspace: str, count: int) -> list[dict[str, Any]]:
    """`count` argument sets from hypothesis-jsonschema (drawn in a thread: the calls are async)."""
    found: list[dict[str, Any]] = []

    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(arguments=arguments_for(name, workspace))
    def collect(arguments: dict[str, Any]) -> None:
        found.append(arguments)

    await anyio.to_thread.run_sync(collect)
    return found


@pytest.fixture(scope="module")
def http_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_service(tmp_path_factory.mktemp("mcp-conformance"), worker=False,
                         env={"EVIDENCEKIT_RETRIEVE_PER_MINUTE": "100000"}) as running:
        yield running


async def test_streamable_http_conformance(http_service: dict[str, Any]) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {http_service['token']}"}) as http, \
            streamable_http_client(http_service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        await conformance(session, http_service["workspace_id"])


@pytest.fixture
async def stdio_session(http_service: dict[str, Any]) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(http_service["data"]), "SOSOAPI_ACCESS_TOKEN": http_service["token"],
           "EVIDENCEKIT_RETRIEVE_PER_MINUTE": "100000", "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "evidencekit", "mcp"],
                                   cwd=str(http_service["data"]), env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def test_stdio_conformance(stdio_session: ClientSession, http_service: dict[str, Any]) -> None:
    await conformance(stdio_session, http_service["workspace_id"])
