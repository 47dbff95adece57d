"""The errors Starlette answers by itself (no such path, wrong method, an unhandled exception) in
the shape of every other error: JSON `{error, message, code, request_id}`, `X-Request-Id`, and on
an operation's path its `X-Contract-Hash`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from evidencekit.contracts.spec import OperationSpec
from evidencekit.server.runtime.errors import ApiError, MethodNotAllowed, NotFound
from evidencekit.server.runtime.hooks import ServiceHooks
from evidencekit.server.runtime.rest_runtime import (
    CONTRACT_HASH_HEADER,
    REQUEST_ID_HEADER,
    request_id_for,
    unexpected,
)

ExceptionHandler = Callable[[Request, Exception], Awaitable[Response]]


def hashes_by_path(specs: Iterable[OperationSpec]) -> dict[str, str]:
    return {spec.rest_path: spec.contract_hash for spec in specs if spec.rest_path}


def error_response(error: ApiError, request_id: str, path: str, hashes: Mapping[str, str]) -> Response:
    """`error` as JSON; on an operation's path (a key of `hashes`) with its contract hash."""
    headers = {**error.headers(), REQUEST_ID_HEADER: request_id}
    found = hashes.get(path)
    if found:
        headers[CONTRACT_HASH_HEADER] = found
    return JSONResponse(error.to_json(request_id), status_code=error.status, headers=headers)


def answer(request: Request, error: ApiError, hashes: Mapping[str, str]) -> Response:
    request_id = request_id_for(request.headers.get(REQUEST_ID_HEADER, ""))
    return error_response(error, request_id, request.url.path, hashes)


def exception_handlers(hashes: Mapping[str, str], hooks: ServiceHooks) -> dict[int, ExceptionHandler]:
    """Starlette's exception_handlers, by status (500: ServerErrorMiddleware, any unhandled exception);
    `hashes`: each operation's contract hash by its path."""

    async def not_found(request: Request, exc: Exception) -> Response:
        return answer(request, NotFound(f"nothing is served at {request.url.path}; the API is described at "
                                        "/openapi.json"), hashes)

    async def method_not_allowed(request: Request, exc: Exception) -> Response:
        headers = exc.headers if isinstance(exc, HTTPException) else None
        allow = (headers or {}).get("Allow", "")
        return answer(request, MethodNotAllowed(f"{request.method} is not allowed on {request.url.path}; "
                                                 f"allowed: {allow}", allow=allow), hashes)

    async def server_error(request: Request, exc: Exception) -> Response:
        """An exception outside any operation's own handling (the bearer check, say)."""
        return answer(request, unexpected(exc, f"{request.method} {request.url.path}", hooks), hashes)

    return {404: not_found, 405: method_not_allowed, 500: server_error}
