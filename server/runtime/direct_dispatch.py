"""The operations' own paths, served without Starlette's middleware stack and router.

A POST to an operation's exact path goes straight to its endpoint, through the same access log and
bearer check every request gets; everything else (other paths and methods, lifespan, /mcp) goes to
the Starlette app. A polled operation (a status read) pays for Starlette's error middlewares,
router and send wrappers about as much as a whole bare Starlette endpoint costs (the service's
scripts/bench.py status). Nothing is lost by skipping them: the bearer check and the endpoints
answer every error themselves, in the shape the Starlette app's handlers give.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime.access_log import AccessLog
from evidencekit.server.runtime.access_log import log as access_log
from evidencekit.server.runtime.bearer import BearerCheck


class DirectDispatch:
    """`app` with `endpoints` (POST path -> ASGI endpoint) served directly; `state` is the app's.
    `protected` endpoints are behind `check` (the bearer check)."""

    def __init__(self, app: Starlette, endpoints: Mapping[str, ASGIApp], check: BearerCheck,
                 protected: frozenset[str]) -> None:
        self.app = app
        self.state = app.state
        self.endpoints = dict(endpoints)
        self.check = check
        self.protected = protected
        self.logged = AccessLog(self._direct)

    async def _direct(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path not in self.protected or await self.check(scope, receive, send):
            await self.endpoints[path](scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.endpoints
                or scope.get("root_path")):
            await self.app(scope, receive, send)
        elif access_log.isEnabledFor(logging.INFO):
            await self.logged(scope, receive, send)
        else:  # what _direct does, one coroutine less
            path = scope["path"]
            if path not in self.protected or await self.check(scope, receive, send):
                await self.endpoints[path](scope, receive, send)
