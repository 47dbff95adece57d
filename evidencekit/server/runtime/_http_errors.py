"""Every error the HTTP surface answers, from one function, in one shape.

`error_answer(exc, scope)` turns an error into its answer: the status, the JSON body
`{error, message, code, request_id}` (ApiError.to_json: `fields` when a body does not match the
contract, `retry_after_seconds` when the caller should wait), `X-Request-Id`, the error's own headers
(WWW-Authenticate, Allow, Retry-After) and what the caller adds (an operation's `X-Contract-Hash`).
Every writer of an error calls it: the operation endpoints (contract errors, handler errors, bodies
too large: rest_runtime), the bearer check (auth refusals: bearer), /mcp's refusals (body_limit,
mcp_hosts, mcp_streams), the app's exception handlers (`ErrorHandler`: no such path, a wrong method,
an ApiError a route of the team's raises, any exception nothing handled) and the serving protocol's
refusals, written before any app runs (http_protocol).

An exception that is not an ApiError becomes one here: Starlette's HTTPException by its status (404
and 405 say what is served and what is allowed), anything else by `unexpected` (logged; 503 when the
service says a dependency is down, else 500).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from http import HTTPStatus
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from evidencekit.contracts._spec import OperationSpec
from evidencekit.server.runtime._errors import (
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    MethodNotAllowed,
    MisdirectedRequest,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    RequestTimeout,
    ServiceUnavailable,
    Unauthorized,
)
from evidencekit.server.runtime._exceptions import HANDLERS_KEY, handler_for
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._json_answer import answer_bytes
from evidencekit.server.runtime._request_head import (
    CONTRACT_HASH_KEY,
    REQUEST_ID_KEY,
    request_id_of,
)

log = logging.getLogger("evidencekit.rest")
RawHeaders = Sequence[tuple[bytes, bytes]]
NO_REQUEST_ID = "-"  # the request id in an answer written before any request was read


def unexpected(exc: BaseException, where: str, hooks: ServiceHooks) -> ApiError:
    """The error to answer for an exception no handler expected, logged: 503 when the service says
    a dependency is down (with the cause in one line, no traceback), else 500."""
    if hooks.is_outage(exc):
        log.error("%s in %s: %s: %s", hooks.outage_log, where, type(exc).__name__, exc)
        return ServiceUnavailable(hooks.outage_message)
    log.error("unhandled error in %s", where, exc_info=exc)
    return ApiError("internal server error")


def error_answer(exc: BaseException, scope: Scope | None = None, *, request_id: str | None = None,
                 hooks: ServiceHooks | None = None, where: str | None = None, headers: RawHeaders = ()) -> Response:
    """The answer to `exc`, raised while serving the request `scope` (None: before there was one).
    `request_id`: the request's, when the caller has it (else read from `scope`); `hooks`: which
    exceptions mean an outage; `where`: how the log names the place of an unexpected exception;
    `headers`: more to send (an operation's contract hash)."""
    extra: list[tuple[bytes, bytes]] = []
    error = exc if isinstance(exc, ApiError) else _api_error(exc, scope, hooks, where, extra)
    if request_id is None and scope is not None:
        request_id = request_id_of(scope)
    response = Response(answer_bytes(error.to_json(request_id or NO_REQUEST_ID)), status_code=error.status,
                        media_type="application/json")
    raw = response.raw_headers
    if request_id:
        raw.append((REQUEST_ID_KEY, request_id.encode()))
    raw += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in error.headers().items()]
    raw += extra
    raw += headers
    return response


def _api_error(exc: BaseException, scope: Scope | None, hooks: ServiceHooks | None, where: str | None,
               extra: list[tuple[bytes, bytes]]) -> ApiError:
    """`exc` as an ApiError; headers of its own that the error does not carry go to `extra`."""
    path = scope["path"] if scope is not None else ""
    if isinstance(exc, HTTPException):
        given = exc.headers or {}
        if exc.status_code == 404:
            return NotFound(f"nothing is served at {path}; the API is described at /openapi.json")
        if exc.status_code == 405:
            allow = given.get("Allow", "")
            method = scope["method"] if scope is not None else ""
            return MethodNotAllowed(f"{method} is not allowed on {path}; allowed: {allow}", allow=allow)
        extra += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in given.items()]
        return _by_status(exc.status_code)(exc.detail)
    if where is None:
        where = f"{scope['method']} {path}" if scope is not None else "the server"
    return unexpected(exc, where, hooks or ServiceHooks())


_KNOWN: dict[int, type[ApiError]] = {error.status: error for error in (
    BadRequest, Unauthorized, Forbidden, NotFound, Conflict, PreconditionFailed, MisdirectedRequest, RequestTimeout,
    PayloadTooLarge, ServiceUnavailable)}


@cache
def _by_status(status: int) -> type[ApiError]:
    """The error a route's HTTPException of `status` is answered as: the tree's own for the statuses
    it has (but 405 and 429, which carry more than a message), else one named after the status."""
    known = _KNOWN.get(status)
    if known is not None:
        return known
    try:
        name = HTTPStatus(status).phrase.lower().replace(" ", "_").replace("-", "_").replace("'", "")
    except ValueError:
        name = "http_error"
    return type(f"HttpError{status}", (ApiError,), {"status": status, "error": name, "default_code": name})


def contract_headers(specs: Iterable[OperationSpec]) -> dict[str, RawHeaders]:
    """Each REST operation's `X-Contract-Hash` header, by its path: sent with every error on it."""
    return {spec.rest_path: [(CONTRACT_HASH_KEY, spec.contract_hash.encode())] for spec in specs if spec.rest_path}


class ErrorHandler:
    """The runtime's Starlette exception handler: `error_answer`, with the operation's contract hash
    on its path. Registered for HTTPException, ApiError and 500 (`exception_handlers`); a handler a
    team registers for one of them (or a status) is used instead, as Starlette does."""

    def __init__(self, hashes: Mapping[str, RawHeaders], hooks: ServiceHooks) -> None:
        self.hashes = hashes
        self.hooks = hooks

    async def __call__(self, request: Request, exc: Exception) -> Response:
        scope = request.scope
        return error_answer(exc, scope, hooks=self.hooks, headers=self.hashes.get(scope["path"], ()))


def exception_handlers(hashes: Mapping[str, RawHeaders], hooks: ServiceHooks) -> dict[Any, ErrorHandler]:
    """Starlette's `exception_handlers` for the app (500: any exception nothing else handled)."""
    handler = ErrorHandler(hashes, hooks)
    return {HTTPException: handler, ApiError: handler, 500: handler}


def handled_by_app(scope: Scope, exc: Exception) -> bool:
    """Whether the app has an exception handler for `exc` that is not the runtime's (one a team
    added), found by Starlette's rules: a status handler for an HTTPException, else one for its class
    or the nearest base (the exception middleware's, left in the scope), else the app's 500 handler.
    An endpoint that answers its own errors lets such an exception go up to it."""
    found = scope.get(HANDLERS_KEY)
    handler = handler_for(found, exc) if found is not None else None
    if handler is None:
        registered = getattr(scope.get("app"), "exception_handlers", None) or {}
        handler = next((value for key, value in reversed(registered.items()) if key in (500, Exception)), None)
    return handler is not None and not isinstance(handler, ErrorHandler)
