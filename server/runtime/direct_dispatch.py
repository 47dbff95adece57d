"""The operations' own paths, served without Starlette's middleware stack and router.

A POST to an operation's exact path, or to /mcp, goes straight to its endpoint (unless the app has
middleware of a team's own: then every request goes through the Starlette app and that middleware),
through the same access log and bearer check every request gets; everything else (other paths and
methods, lifespan, GET and DELETE on /mcp) goes to the Starlette app. A polled operation (a status read) pays for Starlette's error middlewares,
router and send wrappers about as much as a whole bare Starlette endpoint costs (measured on the
evidence service's status read). Nothing is lost by skipping them: the bearer check and the endpoints
answer every error themselves, in the shape the Starlette app's handlers give.
"""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from typing import Any

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime.access_log import (
    ANSWERED,
    LANE,
    UNANSWERED,
    Answer,
    made,
    write_line,
)
from evidencekit.server.runtime.bearer import BearerCheck, Protected
from evidencekit.server.runtime.request_head import header_values
from evidencekit.server.runtime.rest_runtime import OperationEndpoint


class DirectDispatch:
    """`app` with `endpoints` ((method, path) -> ASGI endpoint) served directly; `state` is the app's.
    The paths `protects` names are behind `check` (the bearer check), as in the middleware."""

    def __init__(self, app: Starlette, endpoints: Mapping[tuple[str, str], ASGIApp], check: BearerCheck,
                 protects: Protected) -> None:
        self.app = app
        self.state = app.state
        self.by_path: dict[str, dict[str, ASGIApp]] = {}  # path -> method -> endpoint: no tuple per request
        for (method, path), endpoint in endpoints.items():
            self.by_path.setdefault(path, {})[method] = endpoint
        self.check = check
        self.protected = frozenset(path for path in self.by_path if protects(path))  # decided once per path
        # checked only when a credential is sent (/mcp with public tools beside protected ones)
        self.optional = frozenset(path for path in self.by_path if path in protects.optional)
        # paths whose every endpoint says what it answers (access_log.answered), as the bearer check does
        self.reporting = frozenset(path for path, methods in self.by_path.items()
                                   if all(isinstance(endpoint, OperationEndpoint) for endpoint in methods.values()))

    def _needs_caller(self, scope: Scope, path: str) -> bool:
        return path in self.protected or (path in self.optional and b"authorization" in header_values(scope))

    def add_middleware(self, middleware_class: Any, *args: Any, **kwargs: Any) -> None:
        """Starlette's `add_middleware` (outermost), and from now on every request goes through it:
        the operations are no longer served straight."""
        self.app.add_middleware(middleware_class, *args, **kwargs)
        self.by_path = {}
        self.protected = self.optional = self.reporting = frozenset()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # One flat function: each coroutine a request passes through costs it a frame (the log line
        # is written here too, not by an AccessLog around another coroutine)
        path = scope.get("path", "")  # a lifespan scope has none
        methods = self.by_path.get(path) if scope["type"] == "http" else None
        endpoint = methods.get(scope["method"]) if methods else None
        if endpoint is None or scope.get("root_path"):
            await self.app(scope, receive, send)
        else:
            started = perf_counter()
            if started >= LANE.until:
                LANE.refresh(started)
            if not LANE.enabled:
                if not self._needs_caller(scope, path) or await self.check(scope, receive, send):
                    await endpoint(scope, receive, send)
                return
            watched = None if path in self.reporting else Answer(send)
            out = send if watched is None else watched.send
            try:
                if not self._needs_caller(scope, path) or await self.check(scope, receive, out):
                    await endpoint(scope, receive, out)
            finally:
                status, request_id = (scope.get(ANSWERED, UNANSWERED) if watched is None
                                      else (watched.status, watched.request_id))
                waiting = LANE.waiting
                if waiting is not None and len(waiting) < LANE.room and not LANE.handler.closing:  # type: ignore[union-attr]
                    # access_log.line_of, inline
                    waiting.append([made, perf_counter(), started, scope["method"], scope.get("raw_path"),
                                    scope["path"], status, request_id])
                else:
                    write_line(scope, status, request_id, started)
