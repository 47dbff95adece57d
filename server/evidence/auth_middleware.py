"""Bearer authentication for the REST and MCP HTTP surfaces: the caller's principal, or a JSON 401.

With OAuth configured, the 401 names the protected resource metadata (RFC 9728), which is how a
remote MCP client finds the authorization server.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.evidence.oauth import OAuthSettings
from evidencekit.server.evidence.store.access import authenticate_bearer
from evidencekit.server.runtime.access_log import logged_path
from evidencekit.server.runtime.errors import Unauthorized
from evidencekit.server.runtime.http_errors import error_response
from evidencekit.server.runtime.rest_runtime import (
    REQUEST_ID_KEY,
    header_values,
    request_id_for,
    unexpected,
)

METADATA_PATH = "/.well-known/oauth-protected-resource"


def bearer_secret(authorization: str) -> str:
    """The credential of an `Authorization: Bearer <secret>` header value, else ''."""
    scheme, _, secret = authorization.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


class BearerAuth:
    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...] = ("/research-api/", "/mcp")) -> None:
        self.app = app
        self._roots = tuple(prefix.rstrip("/") for prefix in prefixes)
        self._beneath = tuple(root + "/" for root in self._roots)

    def protects(self, path: str) -> bool:
        return path in self._roots or path.startswith(self._beneath)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        unprotected = scope["type"] != "http" or not self.protects(scope["path"])
        if unprotected or await authenticated(scope, receive, send):
            await self.app(scope, receive, send)


async def authenticated(scope: Scope, receive: Receive, send: Send) -> bool:
    """True, with the caller's principal in `scope["state"]["principal"]`, when the request's bearer
    token is good; else the request is answered here (401; 503 when the token lookup met a database
    outage) and False."""
    headers = header_values(scope)
    try:
        principal = await authenticate_bearer(bearer_secret(headers.get(b"authorization", "")))
    except Exception as exc:  # the token lookup met a database outage (503), or a bug (500)
        error = unexpected(exc, f"the bearer check of {scope['method']} {logged_path(scope)}")
        request_id = request_id_for(headers.get(REQUEST_ID_KEY, ""))
        await error_response(error, request_id, scope["path"])(scope, receive, send)
        return False
    if principal is None:
        request = Request(scope)
        request_id = request_id_for(headers.get(REQUEST_ID_KEY, ""))
        error = Unauthorized("a valid bearer token is required (Authorization: Bearer <token>)")
        challenge = "Bearer"
        if OAuthSettings.from_env() is not None:
            challenge += f' resource_metadata="{str(request.base_url).rstrip("/")}{METADATA_PATH}"'
        response = error_response(error, request_id, scope["path"])
        response.headers["WWW-Authenticate"] = challenge
        await response(scope, receive, send)
        return False
    scope.setdefault("state", {})["principal"] = principal
    return True
