"""The app's two error middlewares: Starlette's own, outermost (`ServerErrors`: an exception nothing
handled, answered by the app's 500 handler) and innermost (`Exceptions`: the handlers added with
`add_exception_handler`, by status for an HTTPException, else by class), watching the answer once
per request between them (sent.watch: the access log between them reads the same watcher) and
making the Request a handler takes only when one runs.

Each of Starlette's watched `send` itself, and its ExceptionMiddleware made a Request and two
closures for every request: together ~3 us of a polled operation's ~10 us in the app (measured in
process on the library example's get_book). What they do with an exception is Starlette's
(ServerErrorMiddleware.__call__, `starlette._exception_handler.wrap_app_handling_exceptions`), step
for step."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware.errors import ServerErrorMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from evidencekit.server.runtime._sent import Sent, watch

HANDLERS_KEY = "starlette.exception_handlers"  # where Starlette's exception middleware leaves its handlers


def handler_for(found: tuple[dict[Any, Any], dict[int, Any]], exc: Exception) -> Any:
    """The handler Starlette's rules give `exc` among `found` (by class, by status): a status
    handler for an HTTPException, else the one for its class or its nearest base; None if none."""
    by_class, by_status = found
    handler = by_status.get(exc.status_code) if isinstance(exc, HTTPException) else None
    if handler is None:
        handler = next((by_class[kind] for kind in type(exc).__mro__ if kind in by_class), None)
    return handler


class ServerErrors(ServerErrorMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = Sent(send, scope)  # outermost: nothing watches further out; every answer gets a request id
        try:
            await self.app(scope, receive, sent.send)
        except Exception as exc:
            request = Request(scope)
            handler: Any = self.handler
            if self.debug:
                response = await run_in_threadpool(self.debug_response, request, exc)
            elif handler is None:
                response = self.error_response(request, exc)
            elif _is_async(handler):
                response = await handler(request, exc)
            else:
                response = await run_in_threadpool(handler, request, exc)
            if not sent.started:
                await response(scope, receive, send)
            raise exc  # for the server to log, as Starlette does


class Exceptions(ExceptionMiddleware):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        found = scope[HANDLERS_KEY] = (self._exception_handlers, self._status_handlers)
        sent, out = watch(send)
        try:
            await self.app(scope, receive, out)
        except Exception as exc:
            handler = handler_for(found, exc)
            if handler is None:
                raise
            if sent.started:
                raise RuntimeError("Caught handled exception, but response already started.") from exc
            request = Request(scope, receive, send)
            if _is_async(handler):
                response = await handler(request, exc)
            else:
                response = await run_in_threadpool(handler, request, exc)
            if response is not None:
                await response(scope, receive, out)
            exc.__traceback__ = None  # reused exception instances would gather tracebacks (as Starlette)


def _is_async(handler: Any) -> bool:
    while isinstance(handler, functools.partial):
        handler = handler.func
    return inspect.iscoroutinefunction(handler) or (
        callable(handler) and inspect.iscoroutinefunction(handler.__call__))
