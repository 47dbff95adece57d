"""What `/mcp` may hold open: the stateless Streamable HTTP endpoint offers no server-initiated
stream, and what one credential and all clients together keep open is bounded in number and time.

- `GET /mcp` (a client asking for a server-initiated event stream) and `DELETE /mcp` (ending a
  session) get 405 with `Allow: POST`, as the MCP spec lets a server without such a stream (or
  sessions) answer. The SDK held each GET open with nothing to send: 2,250 of them from nine
  addresses, one token, stayed open for minutes and kept every other connection out.
- At most `per_credential` POSTs of one credential (the bearer token; without one, the client's
  address) are in progress at once, 429 `too_many_streams` past it; at most `total` of all, 503
  `too_many_streams` past that. Each has `Retry-After: 1`.
- An answer that sends nothing for `idle_seconds` (no first byte, or no next event; the SDK's
  keep-alive comments every 15 s do not count) is ended: if
  nothing was sent yet, with 503 `stream_idle` (/mcp answers JSON: the usual case); an event stream
  already started (a subscription's; the SDK in its event-stream mode starts it
  at once) gets, for the request it answers, a JSON-RPC error (-32001, request timeout) as its last
  event. A client that stops reading holds its stream no longer than that either.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from dataclasses import dataclass

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.server.runtime._anyio_adapter import shielded
from evidencekit.server.runtime._auth import bearer_secret
from evidencekit.server.runtime._errors import (
    ApiError,
    MethodNotAllowed,
    RateLimited,
    ServiceUnavailable,
)
from evidencekit.server.runtime._http_errors import error_answer
from evidencekit.server.runtime._request_head import header_values


@dataclass(frozen=True)
class StreamLimits:
    per_credential: int = 8
    total: int = 128
    idle_seconds: float = 60.0


class McpStreams:
    """ASGI middleware in front of the MCP Streamable HTTP app (stateless). `limits`: the service's
    McpSettings.streams."""

    def __init__(self, app: ASGIApp, limits: StreamLimits | None = None) -> None:
        self.app = app
        self.limits = limits or StreamLimits()
        self.open: Counter[str] = Counter()  # POSTs in progress by credential
        self.total = 0  # all of them

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limits = self.limits
        key = _credential(scope) if scope["method"] == "POST" else ""  # the rest is refused at once
        refused = self._refusal(scope, key, limits)
        if refused is not None:
            await error_answer(refused, scope)(scope, receive, send)
            return
        self.open[key] += 1
        self.total += 1
        try:
            await self._within_idle_limit(scope, receive, send, limits.idle_seconds)
        finally:
            self.total -= 1
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]

    def _refusal(self, scope: Scope, key: str, limits: StreamLimits) -> ApiError | None:
        if scope["method"] != "POST":
            return MethodNotAllowed(f"{scope['method']} is not allowed on {scope['path']}: this MCP endpoint is "
                                    "stateless and offers no server-initiated stream; send requests with POST",
                                    allow="POST")
        if self.total >= limits.total:
            return ServiceUnavailable(f"the server has {limits.total} MCP requests in progress; try again "
                                      "shortly", code="too_many_streams", retry_after=1)
        if self.open[key] >= limits.per_credential:
            return RateLimited(f"this credential has {limits.per_credential} MCP requests in progress; wait for "
                               "one to end", retry_after=1, code="too_many_streams")
        return None

    async def _within_idle_limit(self, scope: Scope, receive: Receive, send: Send, idle: float) -> None:
        started = done = streamed = False
        kept: list[bytes] = []  # the request as read (BodyLimit bounds it): whom a timeout answers
        size = 0

        async def received() -> Message:
            nonlocal size
            message = await receive()
            if message["type"] == "http.request" and size <= MAX_KEPT:
                chunk = message.get("body", b"")
                kept.append(chunk)
                size += len(chunk)
            return message

        timer = _IdleTimer(idle)

        async def sent(message: Message) -> None:
            nonlocal started, done, streamed
            kind = message["type"]
            if kind == "http.response.start":
                started = True
                for key, value in message.get("headers", ()):
                    if key == b"content-type" and value.startswith(b"text/event-stream"):
                        streamed = True
                        break
                activity = True
            else:
                done = kind == "http.response.body" and not message.get("more_body", False)
                activity = not _keep_alive_only(message)
            if activity:
                timer.touch()
            await send(message)  # a send held by a client that does not read counts as idle
            if activity:
                timer.touch()

        try:
            await self.app(scope, received, sent)
        except asyncio.CancelledError:
            if not timer.took_back():
                raise  # not the timer's, or not only: the request's task is being cancelled
        else:
            return
        finally:
            timer.stop()
            timer.took_back()  # what the app swallowed or turned into another error: not left counted
        if not done and (streamed or not started):
            await self._end(scope, receive, send, started, b"".join(kept), idle)
        # a JSON answer cut after its head (a client that stopped reading): nothing more can be said
        # in it; the server closes the connection

    async def _end(self, scope: Scope, receive: Receive, send: Send, started: bool, request: bytes,
                   idle: float) -> None:
        """The answer after the idle limit: an error if nothing was sent, else the event stream's
        last event."""
        message = f"no answer within {idle:g} s"
        with anyio.move_on_after(1):  # a client that does not read is not waited for
            if not started:
                error = ServiceUnavailable(message, code="stream_idle", retry_after=1)
                await error_answer(error, scope)(scope, receive, send)
                return
            await send({"type": "http.response.body", "body": _timeout_event(request, message), "more_body": False})


class _IdleTimer:
    """Cancels the request's task once nothing has happened for `idle` seconds. One timer per
    request, moved lazily: an activity only notes the time, and the timer, when due, sets itself
    again for what is left (re-arming a deadline on every message cost a third of a direct /mcp
    answer).

    The task is cancelled natively, each cancellation counted (`took_back` takes the timer's back,
    as asyncio.timeout does), and asked again every AGAIN_SECONDS while the app goes on: anyio's
    CancelScope, used before, did this at ~3.5 µs a request (a task state per task in a
    WeakKeyDictionary) and 12% of a direct answer's throughput. What anyio's scope also did is kept:
    a section the app shields from anyio's cancellation (`CancelScope(shield=True)`, what
    `anyio.to_thread.run_sync` and so Starlette's `run_in_threadpool` wait in) is not cut; the
    timer asks again once it ends."""

    def __init__(self, idle: float) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self.cancelling = task.cancelling()  # cancellations asked of the task before this timer's
        self.fired = 0
        self.idle = idle
        self.last = self.loop.time()
        self.handle = self.loop.call_at(self.last + idle, self._due)

    def touch(self) -> None:
        self.last = self.loop.time()

    def _due(self) -> None:
        now = self.loop.time()
        due = self.last + self.idle
        if now < due:
            self.handle = self.loop.call_at(due, self._due)
            return
        if not shielded(self.task):
            self.fired += 1
            self.task.cancel()
        self.handle = self.loop.call_at(now + AGAIN_SECONDS, self._due)

    def took_back(self) -> bool:
        """Whether the timer cancelled the task and nothing else did since it started: its
        cancellations are taken back then (once), and a CancelledError is the timer's."""
        if not self.fired:
            return False
        for _ in range(self.fired):
            left = self.task.uncancel()
        self.fired = 0
        return left <= self.cancelling

    def stop(self) -> None:
        self.handle.cancel()


AGAIN_SECONDS = 0.1


MAX_KEPT = 64 * 1024

REQUEST_TIMEOUT = -32001  # JSON-RPC's server-error range, as the MCP SDK names it


def _timeout_event(request: bytes, message: str) -> bytes:
    """An SSE event with the JSON-RPC error answering `request`, if it is one request; else nothing."""
    try:
        parsed = json.loads(request)
    except ValueError:
        return b""
    if not isinstance(parsed, dict) or "id" not in parsed or "method" not in parsed:
        return b""
    error = {"jsonrpc": "2.0", "id": parsed["id"], "error": {"code": REQUEST_TIMEOUT, "message": message}}
    return b"event: message\r\ndata: " + json.dumps(error).encode() + b"\r\n\r\n"


def _keep_alive_only(message: Message) -> bool:
    """An event-stream comment (the SDK's `: ping` every 15 s), which says nothing about the call."""
    chunk = message.get("body", b"") if message["type"] == "http.response.body" else b"x"
    if chunk[:1] not in _COMMENT_OR_BLANK:  # a first line that says something (a JSON answer's `{`)
        return False
    return bool(chunk) and all(line.startswith(b":") for line in chunk.splitlines() if line.strip())


# First bytes of a chunk that may be comments and blank lines only: a colon, ASCII whitespace, none
_COMMENT_OR_BLANK = frozenset([b":", b"", *(bytes([c]) for c in b" \t\n\r\x0b\x0c")])


def _credential(scope: Scope) -> str:
    """Whose stream this is: the bearer credential as the bearer check reads it (scheme in any case,
    spaces around the secret), kept as a digest, never in clear; without one, the client's address."""
    secret = bearer_secret(header_values(scope).get(b"authorization", ""))
    if secret:
        return "token:" + hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()[:32]
    client = scope.get("client")
    return f"address:{client[0] if client else '-'}"
