"""What the app does with an exception, as Starlette's two error middlewares do, without their
layers: outermost (`ServerErrors`: an exception nothing handled, answered by the app's 500 handler;
ServiceApp.__call__ runs the stack inside it) and innermost (`answer_handled`: the handlers added
with `add_exception_handler`, by status for an HTTPException, else by class; run by the policy
layer, _policies.py, around the router), watching the answer once per request (sent.watch: the
access log reads the same watcher) and making the Request a handler takes only when one runs.

Each of Starlette's watched `send` itself, and its ExceptionMiddleware made a Request and two
closures for every request: together ~3 us of a polled operation's ~10 us in the app (measured in
process on the library example's get_book); each layer a request passes through costs it a frame
more. What they do with an exception is Starlette's (ServerErrorMiddleware.__call__,
`starlette._exception_handler.wrap_app_handling_exceptions`), step for step."""

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

from evidencekit.server.runtime._sent import Sent

HANDLERS_KEY = "starlette.exception_handlers"  # where Starlette's exception middleware leaves its handlers
Found = tuple[dict[Any, Any], dict[int, Any]]  # handlers by class, by status


def handler_for(found: Found, exc: Exception) -> Any:
    """The handler Starlette's rules give `exc` among `found` (by class, by status): a status
    handler for an HTTPException, else the one for its class or its nearest base; None if none."""
    by_class, by_status = found
    handler = by_status.get(exc.status_code) if isinstance(exc, HTTPException) else None
    if handler is None:
        handler = next((by_class[kind] for kind in type(exc).__mro__ if kind in by_class), None)
    return handler


def handlers_of(middleware: ExceptionMiddleware) -> Found:
    """The handlers Starlette's exception middleware keeps (its own for HTTPException and
    WebSocketException, and the app's), by class and by status."""
    return middleware._exception_handlers, middleware._status_handlers


class ServerErrors(ServerErrorMiddleware):
    """The app's answer to an exception nothing handled (ServiceApp.__call__ catches it around
    the stack): the 500 handler's (http_errors.ErrorHandler, or the team's) or Starlette's."""

    async def answer(self, scope: Scope, receive: Receive, send: Send, sent: Sent, exc: Exception) -> None:
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


async def answer_handled(found: Found, exc: Exception, sent: Sent, scope: Scope, receive: Receive,
                         send: Send) -> None:
    """`exc`, raised by the router or a route, answered by its handler among `found`; raised on
    when it has none."""
    handler = handler_for(found, exc)
    if handler is None:
        raise exc
    if sent.started:
        raise RuntimeError("Caught handled exception, but response already started.") from exc
    request = Request(scope, receive, send)
    if _is_async(handler):
        response = await handler(request, exc)
    else:
        response = await run_in_threadpool(handler, request, exc)
    if response is not None:
        await response(scope, receive, send)
    exc.__traceback__ = None  # reused exception instances would gather tracebacks (as Starlette)


def _is_async(handler: Any) -> bool:
    while isinstance(handler, functools.partial):
        handler = handler.func
    return inspect.iscoroutinefunction(handler) or (
        callable(handler) and inspect.iscoroutinefunction(handler.__call__))
