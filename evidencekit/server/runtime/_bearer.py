"""Bearer authentication for the REST and MCP HTTP surfaces: the caller's principal, or a JSON 401.

The service's `Auth` says who a credential belongs to; this asks it once per request (auth.identify,
the decision every surface takes) on the paths where the runtime decides access: the operations'
and /mcp (a credential sent is checked there; none sent is refused where every operation of the
path needs a caller), and the project's protected prefixes. The answer is kept in
`scope["state"]["principal"]`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from evidencekit.server.runtime._access_log import logged_path
from evidencekit.server.runtime._auth import identify, sent_credential
from evidencekit.server.runtime._errors import Unauthorized
from evidencekit.server.runtime._hooks import ServiceHooks
from evidencekit.server.runtime._http_errors import RawHeaders, error_answer
from evidencekit.server.runtime._request_head import header_values


class BearerCheck:
    """`await check(scope, receive, send, required)`: True with the principal (None: anonymous) in
    the scope's state when auth.identify takes the request's credential; else the request is
    answered here (401 with the Auth's challenge; 503 when the service says the lookup met an
    outage) and False."""

    def __init__(self, hooks: ServiceHooks, hashes: Mapping[str, RawHeaders]) -> None:
        self.auth = hooks.auth
        self.hooks = hooks
        self.hashes = hashes  # each operation's contract hash header, by its path (http_errors.contract_headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send, required: bool = True) -> bool:
        headers = header_values(scope)
        try:
            principal = await identify(self.auth, sent_credential(headers.get(b"authorization")), required)
        except Unauthorized as refused:
            challenge = self.auth.challenge(str(Request(scope).base_url).rstrip("/"))
            answer = error_answer(Unauthorized(refused.message, challenge=challenge), scope,
                                  headers=self.hashes.get(scope["path"], ()))
            await answer(scope, receive, send)
            return False
        except Exception as exc:  # the token lookup met an outage (503), or a bug (500)
            where = f"the bearer check of {scope['method']} {logged_path(scope)}"
            answer = error_answer(exc, scope, hooks=self.hooks, where=where, headers=self.hashes.get(scope["path"], ()))
            await answer(scope, receive, send)
            return False
        scope.setdefault("state", {})["principal"] = principal
        return True


class Protected:
    """Which paths need a caller: exact paths, and everything beneath a prefix (the prefix itself too).
    `optional`: paths where a credential is checked when one is sent, and a request without one goes
    on anonymously (a public operation's; /mcp with public tools beside protected ones: each tool
    call then says what it needs). `public`: paths never protected, whatever the prefixes (the
    default /healthz, for a load balancer)."""

    def __init__(self, paths: Iterable[str] = (), prefixes: Iterable[str] = (), optional: Iterable[str] = (),
                 public: Iterable[str] = ()) -> None:
        self._paths = frozenset(paths)
        self._public = frozenset(public)
        self._roots = tuple(prefix.rstrip("/") for prefix in prefixes)
        self._beneath = tuple(root + "/" for root in self._roots)
        self.optional = frozenset(optional)
        self._needs: dict[str, int] = {}

    def __call__(self, path: str) -> bool:
        return (path in self._paths or path in self._roots or path.startswith(self._beneath)) and (
            path not in self._public)

    def needs(self, path: str) -> int:
        """Whether a request for `path` needs a caller: NEVER, ALWAYS, or SENT (checked when a
        credential is sent); kept for the paths asked (the operations', on every request)."""
        needs = self._needs.get(path)
        if needs is None:
            needs = ALWAYS if self(path) else SENT if path in self.optional else NEVER
            if len(self._needs) >= _KEPT_PATHS:
                self._needs.clear()
            self._needs[path] = needs
        return needs


NEVER, ALWAYS, SENT = 0, 1, 2  # whether a path needs a caller: no, yes, when a credential is sent
_KEPT_PATHS = 1024  # paths whose answer is kept (the operations' few, mostly; any path can be asked)


