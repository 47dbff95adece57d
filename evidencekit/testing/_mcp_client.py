"""MCP client sessions (official SDK) for conformance runs: Streamable HTTP and stdio, initialized.

`call_tool_unchecked` sends tools/call without the SDK's own check of `structuredContent` against
the listed `outputSchema`: a conformance run reports such an answer as a finding, and the SDK would
raise instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters
from mcp import types as mcp_types


@contextlib.asynccontextmanager
async def http_session(url: str, headers: Mapping[str, str], timeout: float = 30,
                       on_response: Callable[[Any], None] | None = None,
                       ) -> AsyncIterator[ClientSession]:
    """`on_response(response)` sees every HTTP answer of the endpoint (the SDK tells an error status
    only as "Server returned an error response")."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def seen(response: httpx2.Response) -> None:
        if on_response is not None:
            on_response(response)

    async with httpx2.AsyncClient(headers=dict(headers), timeout=timeout,
                                  event_hooks={"response": [seen]}) as http, \
            streamable_http_client(url, http_client=http) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=timeout) as opened:
        await opened.initialize()
        yield opened


@contextlib.asynccontextmanager
async def stdio_session(command: str, args: Sequence[str], env: Mapping[str, str], errlog: TextIO,
                        timeout: float = 30, cwd: str | None = None) -> AsyncIterator[ClientSession]:
    """A session with a server process started as `command args` (its whole environment: `env`)."""
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command, args=list(args), env=dict(env), cwd=cwd)
    async with stdio_client(params, errlog=errlog) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=timeout) as opened:
        await opened.initialize()
        yield opened


async def call_tool_unchecked(session: ClientSession, tool: str, arguments: Any,
                              timeout: float | None = None) -> mcp_types.CallToolResult:
    request = mcp_types.CallToolRequest(params=mcp_types.CallToolRequestParams(name=tool,
                                                                                arguments=arguments))
    return await session.send_request(request, mcp_types.CallToolResult,
                                      request_read_timeout_seconds=timeout)
