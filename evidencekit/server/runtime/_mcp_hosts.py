"""The checks `/mcp` makes besides the app's Host check (_policies.py, on every route): the
`Origin` of a browser's request (the MCP spec's DNS rebinding protection) and a POST's Content-Type,
answered in the error shape of every other error. The MCP SDK's own checks answer plain text
(`421 Invalid Host header`), which names neither what was refused nor how to allow it; they are left off.

The origins allowed are pages of the hosts the app answers to (hosts.HostPolicy), http or https.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime._errors import ApiError, BadRequest
from evidencekit.server.runtime._hosts import HostPolicy
from evidencekit.server.runtime._http_errors import error_answer
from evidencekit.server.runtime._request_head import header_values


class McpHosts:
    """ASGI middleware in front of the MCP app."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self._refusal(scope) if scope["type"] == "http" else None
        if refused is None:
            await self.app(scope, receive, send)
            return
        await error_answer(refused, scope)(scope, receive, send)

    def _refusal(self, scope: Scope) -> ApiError | None:
        headers = header_values(scope)  # the first of each name, as the SDK's checks read them
        if scope["method"] == "POST" and not headers.get(b"content-type", "").lower().startswith("application/json"):
            return BadRequest("an MCP message is sent as application/json", code="unsupported_media_type")
        return self.policy.origin_refusal(headers.get(b"origin"), " on /mcp")
