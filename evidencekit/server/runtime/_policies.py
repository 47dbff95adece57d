"""The app's policy layer: one ASGI middleware, inside the team's own, that applies each request's
policies in their order around the router:

    the access log (access_log.write_line: one line per HTTP request, whatever answered it)
      the Host check (hosts.HostPolicy: 421 on every path but the default /healthz)
        the bearer check (bearer.BearerCheck on the paths bearer.Protected names: 401, 503)
          the exception handlers (Starlette's ExceptionMiddleware's rules: exceptions.answer_handled)
            the router

Each policy is decided in its own module; this only runs them. They were a middleware each, and
every layer costs a request a coroutine frame and an await: one layer instead of four took ~11k of
the ~285k instructions a get_book request cost the served library example (scripts/bench_instructions.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime import _access_log as access_log
from evidencekit.server.runtime._access_log import LANE
from evidencekit.server.runtime._bearer import ALWAYS, NEVER, BearerCheck, Protected
from evidencekit.server.runtime._exceptions import HANDLERS_KEY, answer_handled, handlers_of
from evidencekit.server.runtime._hosts import HostPolicy
from evidencekit.server.runtime._http_errors import error_answer
from evidencekit.server.runtime._request_head import header_values
from evidencekit.server.runtime._sent import watch


class Policies:
    """`hosts` on every path but `exempt`, `check` where `protects` says, the exception `handlers`
    (by class or status, as `add_exception_handler` takes them) around `app`. With no `hosts`,
    every Host is answered; with no `check`, no path needs a caller."""

    def __init__(self, app: ASGIApp, *, handlers: dict[Any, Any], hosts: HostPolicy | None = None,
                 exempt: Iterable[str] = (), check: BearerCheck | None = None, protects: Protected | None = None,
                 debug: bool = False) -> None:
        self.app = app
        self.hosts = hosts
        self.exempt = frozenset(exempt)
        self.check = check
        self.protects = protects if check is not None and protects is not None else Protected()
        self._exceptions = ExceptionMiddleware(app, handlers=handlers, debug=debug)  # a websocket's
        self._found = handlers_of(self._exceptions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket" and self.hosts is not None and scope["path"] not in self.exempt and \
                    not self.hosts.allows_host(header_values(scope).get(b"host")):
                await send({"type": "websocket.close", "code": 1008})
                return
            await self._exceptions(scope, receive, send)
            return
        started = time.perf_counter()
        if started >= LANE.until:
            LANE.refresh(started)
        logged = LANE.enabled
        sent, out = watch(send)
        try:
            path, hosts, check = scope["path"], self.hosts, self.check
            if hosts is not None and path not in self.exempt:
                host = header_values(scope).get(b"host")
                if not hosts.allows_host(host):
                    refusal = hosts.host_refusal(host or None)
                    assert refusal is not None
                    await error_answer(refusal, scope)(scope, receive, out)
                    return
            needs = self.protects.needs(path)
            if needs != NEVER and check is not None and (needs == ALWAYS or b"authorization" in header_values(scope)) \
                    and not await check(scope, receive, out, needs == ALWAYS):
                return
            found = scope[HANDLERS_KEY] = self._found
            try:
                await self.app(scope, receive, out)
            except Exception as exc:
                await answer_handled(found, exc, sent, scope, receive, out)
        finally:
            if logged:  # looked up on the module: a test's spy sees every line
                access_log.write_line(scope, sent.status, sent.request_id, started)
