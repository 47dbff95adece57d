"""The catalogue as a FastMCP server (the SDK's `MCPServer`), stateless Streamable HTTP at /mcp:
typed tool functions whose pydantic return types give the output schemas and structured results.
add_book checks the librarian's token from the request's Authorization header.

BENCH_FASTMCP_JSON=1 answers with JSON instead of an event stream (its faster mode)."""

from __future__ import annotations

import os
from datetime import date
from typing import Annotated
from uuid import UUID

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from library_peers.models import (
    DEFAULT_LIMIT,
    LIBRARIAN_TOKEN,
    AddBookInput,
    AddBookOutput,
    AuthorIn,
    Catalogue,
    Format,
    GetBookOutput,
    SearchBooksOutput,
)

server = MCPServer("library")
catalogue = Catalogue()
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


@server.tool(description="Add a book to the catalogue")
async def add_book(title: Annotated[str, Field(min_length=1, max_length=300)],
                   authors: Annotated[list[AuthorIn], Field(min_length=1, max_length=10)],
                   format: Format, published_on: date, ctx: Context,
                   subtitle: Annotated[str | None, Field(min_length=1, max_length=300)] = None,
                   cover_url: Annotated[str | None, Field(max_length=2048)] = None) -> AddBookOutput:
    request = ctx.request_context.request
    header = request.headers.get("authorization", "") if request is not None else ""
    if not LIBRARIAN_TOKEN or header != f"Bearer {LIBRARIAN_TOKEN}":
        raise ValueError("a bearer token granted catalog:write is needed")
    given = AddBookInput(title=title, subtitle=subtitle, authors=authors, format=format,
                         published_on=published_on, cover_url=cover_url)
    return AddBookOutput(book=catalogue.add(given))


@server.tool(description="Read one book of the catalogue", annotations=READ_ONLY)
async def get_book(id: UUID) -> GetBookOutput:
    return GetBookOutput(book=catalogue.books.get(id))


@server.tool(description="Search the catalogue", annotations=READ_ONLY)
async def search_books(query: Annotated[str, Field(max_length=200)], format: Format | None = None,
                       limit: Annotated[int, Field(ge=1, le=50)] = DEFAULT_LIMIT) -> SearchBooksOutput:
    return catalogue.search(query, format, limit)


app = server.streamable_http_app(stateless_http=True, json_response=os.environ.get("BENCH_FASTMCP_JSON") == "1")
