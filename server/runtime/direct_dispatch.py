"""The operations' own paths, served without Starlette's middleware stack and router.

A POST to an operation's exact path goes straight to its endpoint, through the same access log and
bearer check every request gets; everything else (other paths and methods, lifespan, /mcp) goes to
the Starlette app. A polled operation (a status read) pays for Starlette's error middlewares,
router and send wrappers about as much as a whole bare Starlette endpoint costs (measured on the
evidence service's status read). Nothing is lost by skipping them: the bearer check and the endpoints
answer every error themselves, in the shape the Starlette app's handlers give.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime.access_log import AccessLog
from evidencekit.server.runtime.access_log import log as access_log
from evidencekit.server.runtime.bearer import BearerCheck, Protected


class DirectDispatch:
    """`app` with `endpoints` ((method, path) -> ASGI endpoint) served directly; `state` is the app's.
    The paths `protects` names are behind `check` (the bearer check), as in the middleware."""

    def __init__(self, app: Starlette, endpoints: Mapping[tuple[str, str], ASGIApp], check: BearerCheck,
                 protects: Protected) -> None:
        self.app = app
        self.state = app.state
        self.endpoints = dict(endpoints)
        self.check = check
        # decided once per path: the hot path asks a set, not the prefixes
        self.protected = frozenset(path for _, path in self.endpoints if protects(path))
        self.logged = AccessLog(self._direct)

    async def _direct(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] not in self.protected or await self.check(scope, receive, send):
            await self.endpoints[scope["method"], scope["path"]](scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or (scope["method"], scope["path"]) not in self.endpoints
                or scope.get("root_path")):
            await self.app(scope, receive, send)
        elif access_log.isEnabledFor(logging.INFO):
            await self.logged(scope, receive, send)
        elif scope["path"] not in self.protected or await self.check(scope, receive, send):
            await self.endpoints[scope["method"], scope["path"]](scope, receive, send)  # _direct, one coroutine less
