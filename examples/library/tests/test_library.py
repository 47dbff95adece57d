"""The catalogue as its callers see it: the generated client over REST, and the official MCP SDK
client over Streamable HTTP and stdio."""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from evidencekit.client.runtime import BadRequest, Forbidden, Unauthorized
from evidencekit.server.runtime import ServiceHooks
from evidencekit.testing import serve_app
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from library_api.auth import WRITE, Caller, TokenAuth
from library_api.generated.app import create_app
from library_api.generated.client import Client
from library_api.handlers import SAMPLE_BOOKS, Catalogue

ROOT = Path(__file__).resolve().parents[1]
LIBRARIAN, READER = "librarian-token", "reader-token"  # the reader is known but may not write
DISPOSSESSED = {
    "title": "The Dispossessed",
    "subtitle": "An Ambiguous Utopia",
    "authors": [{"name": "Ursula K. Le Guin", "born": 1929}],
    "format": "ebook",
    "published_on": "1974-05-01",
    "cover_url": "https://covers.example.org/dispossessed.jpg",
}
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def base_url() -> Iterator[str]:
    auth = TokenAuth({LIBRARIAN: Caller("librarian", frozenset({WRITE})), READER: Caller("reader")})
    with serve_app(create_app(Catalogue(SAMPLE_BOOKS), ServiceHooks(auth=auth))) as url:
        yield url


def test_a_book_added_is_found_by_search_and_by_id(base_url: str) -> None:
    with Client(base_url, token=LIBRARIAN) as client:
        added = client.add_book(DISPOSSESSED).book
        assert (added.title, added.subtitle) == ("The Dispossessed", "An Ambiguous Utopia")
        assert added.format == "ebook" and added.cover_url is not None
        assert str(added.published_on) == "1974-05-01" and added.authors[0].born == 1929
        found = client.search_books({"query": "AMBIGUOUS"})
        assert [book.id for book in found.books] == [added.id] and found.total == 1
        by_author = client.search_books({"query": "le guin"})
        assert [book.title for book in by_author.books] == ["The Left Hand of Darkness", "The Dispossessed"]
        assert [book.id for book in client.search_books({"query": "", "format": "ebook"}).books] == [added.id]
        limited = client.search_books({"query": "", "limit": 2})
        assert len(limited.books) == 2 and limited.total == 3
        again = client.get_book({"id": str(added.id)}).book  # each operation has its own Book model
        assert again is not None and again.model_dump() == added.model_dump()
        assert client.get_book({"id": str(uuid.uuid4())}).book is None


def test_optional_fields_not_sent_are_null_in_the_answer(base_url: str) -> None:
    with Client(base_url, token=LIBRARIAN) as client:
        book = client.add_book({"title": "Beowulf", "authors": [{"name": "Anonymous"}], "format": "paperback",
                                "published_on": "1000-01-01"}).book
    assert (book.subtitle, book.cover_url, book.authors[0].born) == (None, None, None)


def test_an_invalid_input_is_a_400_naming_every_field(base_url: str) -> None:
    with Client(base_url, token=LIBRARIAN) as client, pytest.raises(BadRequest) as refused:
        client.add_book({"title": "", "authors": [], "format": "scroll", "published_on": "1974-02-30",
                         "cover_url": "not a uri", "shelf": 3})
    assert refused.value.code == "validation_failed"
    fields = {field["field"] for field in refused.value.fields}
    assert {"$.title", "$.authors", "$.format", "$.published_on", "$.cover_url"} <= fields, fields
    with Client(base_url) as client, pytest.raises(BadRequest) as refused:
        client.search_books({"query": "x", "limit": 51})
    assert [field["field"] for field in refused.value.fields] == ["$.limit"]


def test_writing_needs_a_token_granted_catalog_write(base_url: str) -> None:
    with Client(base_url) as anonymous:
        with pytest.raises(Unauthorized) as refused:
            anonymous.add_book(DISPOSSESSED)
        assert refused.value.headers["www-authenticate"] == "Bearer"
        assert anonymous.search_books({"query": ""}).total == 2  # reading is public
    with Client(base_url, token="wrong-token") as stranger, pytest.raises(Unauthorized):
        stranger.add_book(DISPOSSESSED)
    with Client(base_url, token=READER) as reader, pytest.raises(Forbidden) as refused:
        reader.add_book(DISPOSSESSED)
    assert refused.value.code == "missing_capability"


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def check(result: CallToolResult) -> dict[str, Any]:
    """A successful result: structured content, and the same JSON as text for clients without it."""
    assert not result.is_error, result.content
    data: dict[str, Any] | None = result.structured_content
    assert data is not None and json.loads(text_of(result)) == data
    return data


async def exercise(session: ClientSession) -> None:
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == {"add_book", "get_book", "search_books"}
    assert tools["get_book"].annotations and tools["get_book"].annotations.read_only_hint is True
    assert tools["add_book"].annotations and tools["add_book"].annotations.read_only_hint is False
    book = check(await session.call_tool("add_book", DISPOSSESSED))["book"]
    assert uuid.UUID(book["id"]) and book["published_on"] == "1974-05-01"
    found = check(await session.call_tool("search_books", {"query": "dispossessed"}))
    assert found == {"books": [book], "total": 1}
    assert check(await session.call_tool("get_book", {"id": book["id"]})) == {"book": book}
    assert check(await session.call_tool("get_book", {"id": str(uuid.uuid4())})) == {"book": None}
    bad = await session.call_tool("add_book", {**DISPOSSESSED, "format": "scroll"})
    assert bad.is_error and json.loads(text_of(bad))["code"] == "validation_failed"
    assert "$.format" in text_of(bad)


async def test_mcp_over_streamable_http(base_url: str) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {LIBRARIAN}"}) as http, \
            streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await exercise(session)


async def test_mcp_over_http_takes_public_calls_and_checks_a_token_sent(base_url: str) -> None:
    """get_book and search_books are public, add_book needs a caller: without a token the public tools
    answer and add_book answers an error result naming what is missing; a token sent is checked (401)."""
    async with httpx2.AsyncClient() as http, \
            streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        assert check(await session.call_tool("search_books", {"query": ""}))["total"] == 2
        refused = await session.call_tool("add_book", DISPOSSESSED)
        assert refused.is_error and json.loads(text_of(refused))["code"] == "unauthenticated"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(headers={"Authorization": "Bearer wrong-token"}) as http:
        response = await http.post(f"{base_url}/mcp", json=ping,
                                   headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"


async def test_a_reader_gets_an_error_result_from_add_book(base_url: str) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {READER}"}) as http, \
            streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        refused = await session.call_tool("add_book", DISPOSSESSED)
        assert refused.is_error and json.loads(text_of(refused))["code"] == "missing_capability"
        assert check(await session.call_tool("search_books", {"query": ""}))["total"] == 2


async def test_mcp_over_stdio() -> None:
    env = {**os.environ, "LIBRARY_API_TOKEN": LIBRARIAN}
    params = StdioServerParameters(command=sys.executable, args=["-m", "library_api.serve", "stdio"],
                                   cwd=str(ROOT), env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await exercise(session)
