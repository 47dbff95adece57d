"""Bearer authentication for the REST and MCP HTTP surfaces: the caller's principal, or a JSON 401.

The service's `Auth` says who a credential belongs to; this asks it once per request on the paths
that need a caller (the operations that declare `auth`, and /mcp) and keeps the answer in
`scope["state"]["principal"]`.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime.access_log import answered, logged_path
from evidencekit.server.runtime.auth import UNAUTHENTICATED, bearer_secret
from evidencekit.server.runtime.errors import Unauthorized
from evidencekit.server.runtime.hooks import ServiceHooks
from evidencekit.server.runtime.http_errors import error_response
from evidencekit.server.runtime.rest_runtime import (
    REQUEST_ID_KEY,
    header_values,
    request_id_for,
    unexpected,
)


class BearerCheck:
    """`await check(scope, receive, send)`: True with the principal in the scope's state when the
    request's bearer token is good; else the request is answered here (401; 503 when the service
    says the lookup met an outage) and False."""

    def __init__(self, hooks: ServiceHooks, hashes: dict[str, str]) -> None:
        self.auth = hooks.auth
        self.hooks = hooks
        self.hashes = hashes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> bool:
        headers = header_values(scope)
        try:
            principal = await self.auth.authenticate(bearer_secret(headers.get(b"authorization", "")))
        except Exception as exc:  # the token lookup met an outage (503), or a bug (500)
            error = unexpected(exc, f"the bearer check of {scope['method']} {logged_path(scope)}", self.hooks)
            request_id = request_id_for(headers.get(REQUEST_ID_KEY, ""))
            answered(scope, error.status, request_id)
            await error_response(error, request_id, scope["path"], self.hashes)(scope, receive, send)
            return False
        if principal is None:
            request_id = request_id_for(headers.get(REQUEST_ID_KEY, ""))
            answered(scope, 401, request_id)
            response = error_response(Unauthorized(UNAUTHENTICATED), request_id, scope["path"], self.hashes)
            response.headers["WWW-Authenticate"] = self.auth.challenge(str(Request(scope).base_url).rstrip("/"))
            await response(scope, receive, send)
            return False
        scope.setdefault("state", {})["principal"] = principal
        return True


class Protected:
    """Which paths need a caller: exact paths, and everything beneath a prefix (the prefix itself too).
    The middleware and the direct dispatch ask the same one. `optional`: paths where a credential is
    checked when one is sent, and a request without one goes on anonymously (/mcp with public tools
    beside protected ones: each tool call then says what it needs). `public`: paths never protected,
    whatever the prefixes (the default /healthz, for a load balancer)."""

    def __init__(self, paths: Iterable[str] = (), prefixes: Iterable[str] = (), optional: Iterable[str] = (),
                 public: Iterable[str] = ()) -> None:
        self._paths = frozenset(paths)
        self._public = frozenset(public)
        self._roots = tuple(prefix.rstrip("/") for prefix in prefixes)
        self._beneath = tuple(root + "/" for root in self._roots)
        self.optional = frozenset(optional)

    def __call__(self, path: str) -> bool:
        return (path in self._paths or path in self._roots or path.startswith(self._beneath)) and (
            path not in self._public)


class BearerAuth:
    """Middleware: `check` on the protected paths."""

    def __init__(self, app: ASGIApp, check: BearerCheck, protects: Protected) -> None:
        self.app = app
        self.check = check
        self.protects = protects

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        needed = self.protects(path) or (path in self.protects.optional and b"authorization" in header_values(scope))
        if not needed or await self.check(scope, receive, send):
            await self.app(scope, receive, send)
