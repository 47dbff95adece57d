"""One log line per HTTP request: method, path, status, duration, request id. Never headers,
bodies or query strings (they may carry tokens).

The path is logged as the client sent it (still percent-encoded): decoded, `%0a` would let a
request write a line of its own into the log."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.server.runtime.log_queue import BatchedLog, direct_handler

log = logging.getLogger("evidencekit.access")
_LINE = "%s %s %s %.1fms request_id=%s"
# (status, request id) of the answer, put in the scope by an endpoint that says what it answers
# before sending it (`answered`): its line needs no wrapper around `send` (DirectDispatch)
ANSWERED = "evidencekit.answered"
UNANSWERED = (500, "-")  # what a request that sent nothing is logged with


def answered(scope: Scope, status: int, request_id: str) -> None:
    scope[ANSWERED] = (status, request_id)


def logged_path(scope: Scope) -> str:
    raw: bytes | None = scope.get("raw_path")
    if raw is not None:
        known = _LOGGED.get(raw)
        if known is not None:
            return known
    path: str = raw.partition(b"?")[0].decode("latin-1") if raw else scope["path"]
    if not path.isprintable():
        path = "".join(char if char.isprintable() else f"\\x{ord(char):02x}" for char in path)
    if raw is not None and len(raw) <= _KEPT_LENGTH:
        if len(_LOGGED) >= _KEPT_PATHS:  # paths of every kind (404s): kept no more than this many
            _LOGGED.clear()
        _LOGGED[raw] = path
    return path


_LOGGED: dict[bytes, str] = {}  # raw path as sent -> as logged: the operations' few paths, mostly
_KEPT_PATHS, _KEPT_LENGTH = 1024, 256


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
        else:
            await self.logged(scope, receive, send)

    async def logged(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app's answer, with its line (for callers that have checked the level themselves)."""
        started = time.perf_counter()
        seen = Answer(send)
        try:
            await self.app(scope, receive, seen.send)
        finally:
            write_line(scope, seen.status, seen.request_id, started)


# How long the handler a line goes to is kept before it is looked up again: a handler or filter added
# to the logging setup counts within this. Looked up for every line, it was a fifth of the line's
# cost under load (scripts/bench_servers.py).
RESOLVE_SECONDS = 0.1
_resolved: tuple[BatchedLog | None, float] = (None, -RESOLVE_SECONDS)


def write_line(scope: Scope, status: int, request_id: str, started: float) -> None:
    """The request's line: `started` is its time.perf_counter() when it came in."""
    global _resolved
    now = time.perf_counter()
    args = (scope["method"], logged_path(scope), status, (now - started) * 1000, request_id)
    handler, when = _resolved
    if now - when > RESOLVE_SECONDS:
        handler = direct_handler(log)
        _resolved = (handler, now)
    if handler is not None and not handler.closing:  # the line straight to the log thread's queue
        handler.line(log.name, _LINE, args, now)
    else:  # a record made directly: Logger.info would first walk the stack to find its caller
        # (findCaller), which costs more than the rest of the line
        log.handle(log.makeRecord(log.name, logging.INFO, "", 0, _LINE, args, None))


class Answer:
    """What a response said of itself: its status and request id, seen as it is sent (`send`
    forwards every message). An endpoint that says so itself (`answered`) needs none: watching
    every send cost about as much as the rest of the line."""

    __slots__ = ("forward", "status", "request_id")

    def __init__(self, send: Send) -> None:
        self.forward = send
        self.status = 500
        self.request_id = "-"

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            for key, value in message.get("headers", ()):
                if key == b"x-request-id":
                    self.request_id = value.decode("latin-1")
                    break
        await self.forward(message)
