"""The errors Starlette answers by itself (no such path, wrong method) in the shape of every other
error: JSON `{error, message, code, request_id}`, `X-Request-Id`, and on an operation's path its
`X-Contract-Hash`."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from evidencekit.server.generated.operations import OPERATIONS
from evidencekit.server.runtime.errors import ApiError, MethodNotAllowed, NotFound
from evidencekit.server.runtime.rest_runtime import (
    CONTRACT_HASH_HEADER,
    REQUEST_ID_HEADER,
    request_id_for,
    unexpected,
)

_HASH_BY_PATH = {spec.rest_path: spec.contract_hash for spec in OPERATIONS if spec.rest_path}


def contract_headers(path: str) -> dict[str, str]:
    """`X-Contract-Hash` of the operation served at `path`; nothing for other paths."""
    found = _HASH_BY_PATH.get(path)
    return {CONTRACT_HASH_HEADER: found} if found else {}


def error_response(error: ApiError, request_id: str, path: str) -> Response:
    headers = {**error.headers(), REQUEST_ID_HEADER: request_id, **contract_headers(path)}
    return JSONResponse(error.to_json(request_id), status_code=error.status, headers=headers)


def answer(request: Request, error: ApiError) -> Response:
    return error_response(error, request_id_for(request.headers.get(REQUEST_ID_HEADER, "")), request.url.path)


async def not_found(request: Request, exc: Exception) -> Response:
    return answer(request, NotFound(f"nothing is served at {request.url.path}; the API is described at /openapi.json"))


async def method_not_allowed(request: Request, exc: Exception) -> Response:
    headers = exc.headers if isinstance(exc, HTTPException) else None
    allow = (headers or {}).get("Allow", "")
    return answer(request, MethodNotAllowed(f"{request.method} is not allowed on {request.url.path}; "
                                             f"allowed: {allow}", allow=allow))


async def server_error(request: Request, exc: Exception) -> Response:
    """An exception outside any operation's own handling (the bearer check reading the database, say)."""
    return answer(request, unexpected(exc, f"{request.method} {request.url.path}"))


# Starlette's exception_handlers, by status (500: ServerErrorMiddleware, for any unhandled exception)
HANDLERS = {404: not_found, 405: method_not_allowed, 500: server_error}
