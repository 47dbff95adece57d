"""McpHosts reads Host, Origin and Content-Type as the MCP SDK's own checks (which it stands in
for) read them: the first of each name."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evidencekit.server.runtime._app import loopback_security
from evidencekit.server.runtime._mcp_hosts import McpHosts


def status_of(headers: list[tuple[bytes, bytes]]) -> int:
    sent: list[dict[str, Any]] = []

    async def served(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "client": ("127.0.0.1", 1)}
    asyncio.run(McpHosts(served, loopback_security("library.example.org"))(scope, receive, send))
    return next(message["status"] for message in sent if message["type"] == "http.response.start")


JSON = (b"content-type", b"application/json")


@pytest.mark.parametrize(("headers", "status"), [
    ([JSON, (b"host", b"localhost:8000")], 200),
    ([JSON, (b"host", b"attacker.example")], 421),
    ([JSON], 421),  # no Host at all
    ([JSON, (b"host", b"localhost:8000"), (b"host", b"attacker.example")], 200),
    ([JSON, (b"host", b"attacker.example"), (b"host", b"localhost:8000")], 421),
    ([JSON, (b"host", b"library.example.org"), (b"origin", b"https://attacker.example")], 403),
    ([JSON, (b"host", b"localhost"), (b"origin", b"http://localhost"), (b"origin", b"https://attacker.example")], 200),
    ([(b"content-type", b"text/plain"), JSON, (b"host", b"localhost")], 400),
    ([(b"content-type", b"Application/JSON; charset=utf-8"), (b"host", b"localhost")], 200),
])
def test_the_first_of_each_header_is_the_one_checked(headers: list[tuple[bytes, bytes]], status: int) -> None:
    assert status_of(headers) == status
