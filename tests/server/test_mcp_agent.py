"""An agent with nothing but its token (the official SDK client, stdio and Streamable HTTP): it
learns its workspace from the instructions, retrieves a new page, finds the stored document by a
word in it with search_documents and reads it with get_documents by the name search answered. It
is told no workspace id and no document name."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.origin import Origin, Reply
from tests.server.test_mcp import http_service, origin, stdio_params  # noqa: F401 (fixtures)
from tests.support import REPO as ROOT
from tests.support import until, validator_named

pytestmark = pytest.mark.anyio
WORKSPACE = re.compile(r"your workspace_ids?: ([0-9a-f-]{36}) \(")


def answer(name: str, result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert validator_named(name).output_errors(result.structured_content) == []
    return result.structured_content  # type: ignore[no-any-return]


async def on_its_own(session: ClientSession, pages: Origin, tag: str) -> None:
    started = await session.initialize()
    assert started.instructions is not None
    assert "search_documents" in started.instructions
    found = WORKSPACE.search(started.instructions)
    assert found, started.instructions
    workspace = found.group(1)
    tools = {tool.name for tool in (await session.list_tools()).tools}
    assert {"search_documents", "get_documents", "sosoapi_research_evidence_retrieve"} <= tools

    word = f"Eisvogel{tag}"
    page = pages.reply(f"/agent/{tag}", Reply(
        f"<html lang='de'><head><title>Am Teich</title></head><body><main><h1>Am Teich</h1>"
        f"<p>Heute sahen wir einen {word} am Ufer, dann zwei Reiher.</p></main></body></html>".encode()))
    mutation = str(uuid.uuid4())
    answer("sosoapi_research_evidence_retrieve", await session.call_tool(
        "sosoapi_research_evidence_retrieve",
        {"workspace_id": workspace, "mutation_id": mutation, "url": page, "kind": "url_text"}))
    async def settled() -> str | None:
        status = answer("sosoapi_research_evidence_status", await session.call_tool(
            "sosoapi_research_evidence_status", {"workspace_id": workspace, "mutation_id": mutation}))
        state: str = status["retrieval"]["state"]
        return None if state in ("pending", "running") else state

    assert await until(settled, what="the retrieval to settle", every=0.05) == "completed"

    results = answer("search_documents", await session.call_tool(
        "search_documents", {"query": word.lower()}))["results"]
    assert [result["uri"] for result in results] == [page]
    assert word in results[0]["snippet"] and results[0]["title"] == "Am Teich"
    documents = answer("get_documents", await session.call_tool(
        "get_documents", {"names": [results[0]["parent"]]}))["documents"]
    assert word in documents[0]["content"]


async def by_the_descriptions(session: ClientSession, pages: Origin, tag: str) -> None:
    """The task "find what stored pages say about X, retrieve this URL, quote its second paragraph",
    each step taken only because a tool's description or the instructions say so: which tool, which
    argument (a new UUID per retrieval, the workspace named in the instructions), when to poll, that
    a URL is a document's name too, how a hit says it was found."""
    started = await session.initialize()
    assert started.instructions is not None
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}

    def saying(*phrases: str) -> str:
        [name] = [name for name, tool in tools.items() if all(p in (tool.description or "") for p in phrases)]
        return name

    find, fetch = saying("Find stored documents"), saying("Retrieve", "url: a public https URL")
    poll, read = saying("never starts a new retrieval"), saying("full content", "that URL itself is taken too")
    said = tools[fetch].description or ""
    assert "mutation_id: a new UUID for each new retrieval" in said and "the server's instructions name yours" in said
    assert "until retrieval.state settles" in said and "url_text (a page's" in said
    workspace = WORKSPACE.search(started.instructions).group(1)  # type: ignore[union-attr]
    query = tools[find].input_schema["properties"]["query"]["description"]
    assert "inflections and plurals" in query and "match says whether" in query

    first, second = (f"Am Deich brüten seit diesem Frühjahr Säbelschnäbler{tag}.",
                     f"Die Zählung ergab zwölf Paare; im Vorjahr waren es sieben{tag}.")
    page = pages.reply(f"/agent/descriptions/{tag}", Reply(
        f"<html lang='de'><head><title>Vogelzählung</title></head><body><main><h1>Vogelzählung</h1>"
        f"<p>{first}</p><p>{second}</p></main></body></html>".encode()))
    mutation = str(uuid.uuid4())
    arguments = {"workspace_id": workspace, "mutation_id": mutation, "url": page, "kind": "url_text"}
    answer(fetch, await session.call_tool(fetch, arguments))
    async def polled() -> str | None:  # as the description says: until retrieval.state settles
        state: str = answer(poll, await session.call_tool(poll, {"workspace_id": workspace, "mutation_id": mutation}))[
            "retrieval"]["state"]
        return None if state in ("pending", "running") else state

    assert await until(polled, what="the retrieval to settle", every=0.05) == "completed"

    # what stored pages say about "Säbelschnäbler": asked in the singular, the page has the plural
    [hit] = answer(find, await session.call_tool(find, {"query": f"Säbelschnäbler{tag} Paar"}))["results"]
    assert hit["uri"] == page and hit["match"] == "forms" and hit["matched_words"] == [f"Säbelschnäbler{tag}", "Paar"]
    [document] = answer(read, await session.call_tool(read, {"names": [page]}))["documents"]  # the URL itself
    assert document["name"] == hit["parent"]
    paragraphs = [block for block in document["content"].split("\n\n") if block.strip() and not block.startswith("#")]
    assert paragraphs[1] == second


@asynccontextmanager
async def over_http(service: dict[str, Any]) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {service['token']}"}
    async with httpx2.AsyncClient(headers=headers) as http, \
            streamable_http_client(service["mcp"], http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        yield session


@asynccontextmanager
async def over_stdio(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            yield session


async def test_an_agent_does_the_task_by_the_descriptions_over_streamable_http(
        http_service: dict[str, Any], origin: Origin) -> None:  # noqa: F811
    async with over_http(http_service) as session:
        await by_the_descriptions(session, origin, "http")


async def test_an_agent_does_the_task_by_the_descriptions_over_stdio(stdio_params: StdioServerParameters,  # noqa: F811
                                                                     origin: Origin) -> None:  # noqa: F811
    async with over_stdio(stdio_params) as session:
        await by_the_descriptions(session, origin, "stdio")


async def test_an_agent_on_its_own_over_streamable_http(http_service: dict[str, Any],  # noqa: F811
                                                        origin: Origin) -> None:  # noqa: F811
    async with over_http(http_service) as session:
        await on_its_own(session, origin, "http")


async def test_an_agent_on_its_own_over_stdio(stdio_params: StdioServerParameters,  # noqa: F811
                                              origin: Origin) -> None:  # noqa: F811
    async with over_stdio(stdio_params) as session:
        await on_its_own(session, origin, "stdio")


async def test_http_instructions_are_the_callers_own(http_service: dict[str, Any]) -> None:  # noqa: F811
    """The workspaces named are the caller's, computed per initialize: no other caller's leak in."""
    def admin(*argv: str) -> dict[str, Any]:
        env = {**os.environ, "EVIDENCEKIT_DATA_DIR": str(http_service["data"])}
        done = subprocess.run([sys.executable, "-m", "evidencekit", "admin", *argv], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=60, check=True)
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    await asyncio.to_thread(admin, "user", "stranger")
    other = (await asyncio.to_thread(admin, "token", "stranger"))["token"]
    for token, expected in ((http_service["token"], http_service["workspace_id"]), (other, None)):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http, \
                streamable_http_client(http_service["mcp"], http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            instructions = (await session.initialize()).instructions or ""
        if expected:
            assert f"your workspace_id: {expected} (" in instructions
        else:
            assert http_service["workspace_id"] not in instructions
            assert "you are a member of no workspace" in instructions
