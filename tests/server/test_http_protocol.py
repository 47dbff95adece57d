"""The HTTP protocol `evidencekit serve` runs: a request's head is bounded, its body is not cut by it."""

from __future__ import annotations

import socket
from typing import Any

import httpx

from evidencekit.server.runtime.http_protocol import MAX_HEAD_BYTES, BoundedHeadHttpTools
from tests.support import live_server


async def echo_length(scope: dict[str, Any], receive: Any, send: Any) -> None:
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(size).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def test_an_oversized_head_is_refused_with_431_and_the_connection_closed() -> None:
    with live_server(echo_length, http=BoundedHeadHttpTools) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Filler: ")
            sent = 0
            try:
                while sent < 4 * MAX_HEAD_BYTES:  # a header that never ends
                    connection.sendall(b"a" * 4096)
                    sent += 4096
            except (BrokenPipeError, ConnectionResetError):
                pass
            answer = b""
            try:
                while chunk := connection.recv(65536):
                    answer += chunk
            except ConnectionResetError:
                pass
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b'"code": "request_header_fields_too_large"' in answer


def test_ordinary_heads_and_bodies_pass_and_keep_alive_counts_each_request_anew() -> None:
    with live_server(echo_length, http=BoundedHeadHttpTools) as base, httpx.Client() as client:
        headers = {"X-Filler": "a" * (MAX_HEAD_BYTES // 2)}
        for _ in range(4):  # one connection: the heads together pass the bound, each alone does not
            response = client.post(base + "/", headers=headers, content=b"b" * 60_000)
            assert (response.status_code, response.text) == (200, "60000")
