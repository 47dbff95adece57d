"""The operations' own paths, served without Starlette's middleware stack and router.

A POST to an operation's exact path goes straight to its endpoint, through the same access log and
bearer check every request gets; everything else (other paths and methods, lifespan, /mcp) goes to
the Starlette app. Status is polled: for it, Starlette's error middlewares, router and send
wrappers cost about as much as the whole bare Starlette endpoint the status benchmark compares
against (scripts/bench.py status). Nothing is lost by skipping them: the bearer check and the
endpoints answer every error themselves, in the shape the Starlette app's handlers give.
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.evidence.auth_middleware import authenticated
from evidencekit.server.runtime.access_log import AccessLog
from evidencekit.server.runtime.access_log import log as access_log


class DirectDispatch:
    """`app` with `routes` (its operations' routes) served directly; `state` is the app's."""

    def __init__(self, app: Starlette, routes: list[Route]) -> None:
        self.app = app
        self.state = app.state
        self.endpoints: dict[str, ASGIApp] = {route.path: route.endpoint for route in routes
                                              if route.methods == {"POST"}}
        self.logged = AccessLog(self._direct)

    async def _direct(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await authenticated(scope, receive, send):
            await self.endpoints[scope["path"]](scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.endpoints
                or scope.get("root_path")):
            await self.app(scope, receive, send)
        elif access_log.isEnabledFor(logging.INFO):
            await self.logged(scope, receive, send)
        elif await authenticated(scope, receive, send):  # what _direct does, one coroutine less
            await self.endpoints[scope["path"]](scope, receive, send)
