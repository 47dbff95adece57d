"""Bearer authentication for the REST surface: the token's principal, or a JSON 401."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from server.errors import Unauthorized
from server.store.access import authenticate

from .rest_runtime import REQUEST_ID_HEADER, request_id_for


def bearer_secret(headers: Headers) -> str:
    scheme, _, secret = headers.get("authorization", "").partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


class BearerAuth:
    def __init__(self, app: ASGIApp, prefix: str = "/research-api/") -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefix):
            await self.app(scope, receive, send)
            return
        principal = await authenticate(bearer_secret(Headers(scope=scope)))
        if principal is None:
            from starlette.requests import Request

            request_id = request_id_for(Request(scope))
            error = Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
            response = JSONResponse(error.to_json(request_id), status_code=401,
                                    headers={REQUEST_ID_HEADER: request_id, **error.headers()})
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)
