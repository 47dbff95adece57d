"""Bearer authentication for the REST and MCP HTTP surfaces: the caller's principal, or a JSON 401.

The service's `Auth` says who a credential belongs to; this asks it once per request on the paths
that need a caller (the operations that declare `auth`, and /mcp) and keeps the answer in
`scope["state"]["principal"]`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime.access_log import answered, logged_path
from evidencekit.server.runtime.auth import UNAUTHENTICATED, bearer_secret
from evidencekit.server.runtime.errors import Unauthorized
from evidencekit.server.runtime.hooks import ServiceHooks
from evidencekit.server.runtime.http_errors import RawHeaders, error_answer
from evidencekit.server.runtime.request_head import header_values, request_id_of


class BearerCheck:
    """`await check(scope, receive, send)`: True with the principal in the scope's state when the
    request's bearer token is good; else the request is answered here (401; 503 when the service
    says the lookup met an outage) and False."""

    def __init__(self, hooks: ServiceHooks, hashes: Mapping[str, RawHeaders]) -> None:
        self.auth = hooks.auth
        self.hooks = hooks
        self.hashes = hashes  # each operation's contract hash header, by its path (http_errors.contract_headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> bool:
        headers = header_values(scope)
        try:
            principal = await self.auth.authenticate(bearer_secret(headers.get(b"authorization", "")))
        except Exception as exc:  # the token lookup met an outage (503), or a bug (500)
            where = f"the bearer check of {scope['method']} {logged_path(scope)}"
            request_id = request_id_of(scope)
            answer = error_answer(exc, scope, request_id=request_id, hooks=self.hooks, where=where,
                                  headers=self.hashes.get(scope["path"], ()))
            answered(scope, answer.status_code, request_id)
            await answer(scope, receive, send)
            return False
        if principal is None:
            challenge = self.auth.challenge(str(Request(scope).base_url).rstrip("/"))
            request_id = request_id_of(scope)
            answer = error_answer(Unauthorized(UNAUTHENTICATED, challenge=challenge), scope, request_id=request_id,
                                  headers=self.hashes.get(scope["path"], ()))
            answered(scope, 401, request_id)
            await answer(scope, receive, send)
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
