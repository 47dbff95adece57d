"""The toolkit's per-caller instructions: `McpSettings.caller_instructions` adds text of the
authenticated caller to the `initialize` answer over /mcp (the SDK client reads it), asked once per
initialize and never for other messages; without the hook the instructions stay the settings'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from evidencekit.server.generated.app import create_app
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._mcp import McpSettings
from tests.support import AllowAll, ExampleHandlers, live_server

pytestmark = pytest.mark.anyio


class Named(AllowAll):
    @dataclass(frozen=True)
    class Caller(AllowAll.Caller):
        name: str = ""

    async def authenticate(self, credential: str) -> AllowAll.Caller:
        return self.Caller(name=credential)


async def instructions_for(base: str, token: str) -> str | None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
            streamable_http_client(base + "/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        started = await session.initialize()
        await session.list_tools()  # another message: not asked about
        return started.instructions


async def test_each_caller_reads_its_own_instructions() -> None:
    asked: list[Any] = []

    async def about(caller: Any) -> str:
        asked.append(caller.name)
        return f"You are {caller.name}."

    settings = McpSettings(name="t", instructions="Read the docs.", caller_instructions=about)
    with live_server(create_app(ExampleHandlers(), ServiceHooks(auth=Named()), mcp=settings),
                     lifespan="on") as base:
        assert await instructions_for(base, "ada") == "Read the docs. You are ada."
        assert await instructions_for(base, "bob") == "Read the docs. You are bob."
    assert asked == ["ada", "bob"]


async def test_without_the_hook_the_instructions_are_the_settings() -> None:
    settings = McpSettings(name="t", instructions="Read the docs.")
    with live_server(create_app(ExampleHandlers(), ServiceHooks(auth=Named()), mcp=settings),
                     lifespan="on") as base:
        assert await instructions_for(base, "ada") == "Read the docs."


async def test_a_client_that_discovers_first_reads_the_callers_instructions_too() -> None:
    """The SDK's Client (its default mode) asks `server/discover` before anything: its answer
    carries the caller's text as initialize's does."""
    from mcp.client.client import Client

    async def about(caller: Any) -> str:
        return f"You are {caller.name}."

    settings = McpSettings(name="t", instructions="Read the docs.", caller_instructions=about)
    with live_server(create_app(ExampleHandlers(), ServiceHooks(auth=Named()), mcp=settings),
                     lifespan="on") as base:
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer ada"}) as http, \
                Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
            assert client.instructions == "Read the docs. You are ada."


async def test_a_failing_hook_leaves_the_servers_instructions() -> None:
    async def broken(caller: Any) -> str:
        raise ConnectionError("database down")

    settings = McpSettings(name="t", instructions="Read the docs.", caller_instructions=broken)
    with live_server(create_app(ExampleHandlers(), ServiceHooks(auth=Named()), mcp=settings),
                     lifespan="on") as base:
        assert await instructions_for(base, "ada") == "Read the docs."
