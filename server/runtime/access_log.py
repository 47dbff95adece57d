"""One log line per HTTP request: method, path, status, duration, request id. Never headers,
bodies or query strings (they may carry tokens).

The path is logged as the client sent it (still percent-encoded): decoded, `%0a` would let a
request write a line of its own into the log."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidencekit.server.runtime.log_queue import direct_handler

log = logging.getLogger("evidencekit.access")
_LINE = "%s %s %s %.1fms request_id=%s"
# (status, request id) of the answer, put in the scope by an endpoint that says what it answers
# before sending it (`answered`): its line needs no wrapper around `send` (DirectDispatch)
ANSWERED = "evidencekit.answered"


def answered(scope: Scope, status: int, request_id: str) -> None:
    scope[ANSWERED] = (status, request_id)


def logged_path(scope: Scope) -> str:
    raw: bytes | None = scope.get("raw_path")
    path: str = raw.partition(b"?")[0].decode("latin-1") if raw else scope["path"]
    if path.isprintable():
        return path
    return "".join(char if char.isprintable() else f"\\x{ord(char):02x}" for char in path)


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


def write_line(scope: Scope, status: int, request_id: str, started: float) -> None:
    """The request's line: `started` is its time.perf_counter() when it came in."""
    args = (scope["method"], logged_path(scope), status, (time.perf_counter() - started) * 1000, request_id)
    handler = direct_handler(log)
    if handler is not None:  # the line straight to the log thread's queue (log_queue)
        handler.line(log.name, _LINE, args)
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
