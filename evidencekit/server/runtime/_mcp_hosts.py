"""The Host and Origin checks of `/mcp` (DNS rebinding protection), answered in the error shape of
every other error: the MCP SDK's own checks answer plain text (`421 Invalid Host header`), which
names neither the host refused nor how to allow it.

The allowed hosts are loopback plus the project's `allowed_hosts` (`[tool.evidencekit.codegen]`,
generated into `<package>.app.ALLOWED_HOSTS`), or the `mcp_security` settings an app is built with.
A POST's Content-Type is checked here too (the SDK answers that in plain text as well).
"""

from __future__ import annotations

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime._errors import ApiError, BadRequest, Forbidden, MisdirectedRequest
from evidencekit.server.runtime._http_errors import error_answer

HOW_TO_ALLOW = ("allow it with `allowed_hosts` in [tool.evidencekit.codegen] and regenerate, or build the app "
                "with `mcp_security=loopback_security(...)`")


class McpHosts:
    """ASGI middleware in front of the MCP app, whose own checks are then left off."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope) if scope["type"] == "http" else None
        if refused is None:
            await self.app(scope, receive, send)
            return
        await error_answer(refused, scope)(scope, receive, send)

    def _refusal(self, scope: Scope) -> ApiError | None:
        content_type = host = origin = None  # the first of each name, as the SDK's checks read them
        for name, value in scope["headers"]:
            if name == b"content-type" and content_type is None:
                content_type = value
            elif name == b"host" and host is None:
                host = value
            elif name == b"origin" and origin is None:
                origin = value
        if scope["method"] == "POST" and not (content_type or b"").lower().startswith(b"application/json"):
            return BadRequest("an MCP message is sent as application/json", code="unsupported_media_type")
        if not self.settings.enable_dns_rebinding_protection:
            return None
        return self._foreign(host.decode("latin-1") if host is not None else None,
                             origin.decode("latin-1") if origin is not None else None)

    def _foreign(self, host: str | None, origin: str | None) -> ApiError | None:
        if not host or not allowed(host, self.settings.allowed_hosts):
            return MisdirectedRequest(f"this server does not answer to the host {host!r} on /mcp: {HOW_TO_ALLOW}")
        if origin and not allowed(origin, self.settings.allowed_origins):
            return Forbidden(f"requests from the origin {origin!r} are not taken on /mcp: {HOW_TO_ALLOW}",
                             code="origin_not_allowed")
        return None


def allowed(value: str, patterns: list[str]) -> bool:
    """`value` is one of `patterns`, where `name:*` stands for the name with any port (the SDK's rules)."""
    return value in patterns or any(pattern.endswith(":*") and value.startswith(pattern[:-1]) for pattern in patterns)
