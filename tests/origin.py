"""Origin servers the fetch tests talk to: real HTTPS (a test CA the tests trust) and plain HTTP
on 127.0.0.1, with replies each test sets up, and a canary that counts every connection it gets."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trustme
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from tests.support import Hold, live_server


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    chunks: int = 1  # stream the body in this many pieces
    # before the answer: for a page slower than a fetch limit (a timeout), whatever the load; a page
    # that must stay unanswered until the test says so is held instead
    delay: float = 0.0
    declared_length: int | None = None  # Content-Length to claim (to cut the body short)
    hold: Hold | None = None  # answered once the test releases it
    # with a hold: its head at once, then a space this often until released, as a slow origin sends,
    # so a fetcher's read timeout (10 s) does not end a page held while processes start on a loaded
    # machine; the body follows the release
    trickle: float = 0.0


class Origin:
    """A Starlette-free ASGI app serving `replies` by path; unknown paths are 404."""

    def __init__(self) -> None:
        self.replies: dict[str, Reply] = {}
        self.hits: list[str] = []
        self.queries: dict[str, list[str]] = {}  # the query strings requested, by path
        self.headers: dict[str, dict[str, str]] = {}  # request headers, by path
        self.url = ""
        self.in_flight = 0
        self.most_in_flight = 0  # the most requests it answered at once

    def reply(self, path: str, reply: Reply) -> str:
        self.replies[path] = reply
        return self.url + path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        self.hits.append(request.url.path)
        self.queries.setdefault(request.url.path, []).append(request.url.query)
        self.headers[request.url.path] = dict(request.headers)
        reply = self.replies.get(request.url.path, Reply(b"not here", 404, "text/plain"))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self._answer(reply, scope, receive, send)
        finally:
            self.in_flight -= 1

    async def _answer(self, reply: Reply, scope: Scope, receive: Receive, send: Send) -> None:
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.hold is not None and not reply.trickle:
            await reply.hold.wait()
        headers = dict(reply.headers)
        if reply.content_type:
            headers["content-type"] = reply.content_type
        if reply.hold is not None and reply.trickle:
            await StreamingResponse(_trickled(reply.hold, reply.trickle, reply.body), reply.status, headers)(
                scope, receive, send)
            return
        if reply.declared_length is not None:
            headers["content-length"] = str(reply.declared_length)
        if reply.chunks == 1 and reply.declared_length is None:
            response: Response = Response(reply.body, reply.status, headers)
        else:
            size = max(1, len(reply.body) // reply.chunks)

            async def pieces() -> AsyncIterator[bytes]:
                for start in range(0, len(reply.body), size):
                    yield reply.body[start:start + size]
                    await asyncio.sleep(0)

            response = StreamingResponse(pieces(), reply.status, headers)
        # A body shorter than its declared length: uvicorn drops the connection, as intended.
        with contextlib.suppress(RuntimeError):
            await response(scope, receive, send)


async def _trickled(hold: Hold, every: float, body: bytes) -> AsyncIterator[bytes]:
    while True:
        try:
            await asyncio.wait_for(hold.wait(), every)
            break
        except TimeoutError:
            yield b" "
    yield body


def gzip_bomb(size: int) -> bytes:
    return gzip.compress(b"\0" * size, compresslevel=9)


@dataclass
class LocalCA:
    ca: trustme.CA
    certfile: Path
    keyfile: Path

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context


def make_ca(folder: Path) -> LocalCA:
    ca = trustme.CA()
    cert = ca.issue_cert("localhost", "127.0.0.1", "::1")
    certfile, keyfile = folder / "server.pem", folder / "server.key"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    for extra in cert.cert_chain_pems[1:]:
        extra.write_to_path(str(certfile), append=True)
    cert.private_key_pem.write_to_path(str(keyfile))
    return LocalCA(ca, certfile, keyfile)


@contextmanager
def serve_origin(tls: LocalCA | None = None, host: str = "127.0.0.1") -> Iterator[Origin]:
    origin = Origin()
    options = {"ssl_certfile": str(tls.certfile), "ssl_keyfile": str(tls.keyfile)} if tls else {}
    with live_server(origin, host=host, **options) as url:
        origin.url = url
        yield origin


class Canary:
    """A TCP listener that records every connection made to it (and answers nothing)."""

    def __init__(self) -> None:
        self.connections = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()
