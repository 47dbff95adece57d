"""Instructions written for the caller: an `initialize` (or `server/discover`) over /mcp answers the
server's instructions followed by what `McpSettings.caller_instructions` says of the
authenticated caller (the workspaces it may name, say), so an agent's first call needs nothing it
was not told.

The text is computed only for those requests (one per connection, not one per call) and
handed to the SDK's server through a context variable, which the tasks it starts for the request
inherit. Placed after BodyLimit, which has read the body whole.
"""

from __future__ import annotations

import contextvars
import json
import logging
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from evidencekit.server.runtime._body_limit import replaying

log = logging.getLogger("evidencekit.mcp")
for_caller: contextvars.ContextVar[str] = contextvars.ContextVar("evidencekit_caller_instructions", default="")


def with_caller(instructions: str | None) -> str | None:
    """The server's instructions followed by the current caller's text, when there is one."""
    extra = for_caller.get()
    if not extra:
        return instructions
    return f"{instructions} {extra}" if instructions else extra


# The requests answered with the instructions: `initialize`, and `server/discover`, which newer
# clients send first.
_ANSWERED_WITH_INSTRUCTIONS = ("initialize", "server/discover")


def _asks_for_instructions(body: bytes) -> bool:
    if b"initialize" not in body and b"server/discover" not in body:  # most messages: no parse
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") in _ANSWERED_WITH_INSTRUCTIONS


async def _caller_text(hook: Any, principal: Any) -> str:
    """The hook's text, or none when it fails (a database outage): the caller still gets the
    server's instructions, and its calls their own errors."""
    try:
        return await hook(principal) or ""
    except Exception:
        log.warning("caller_instructions failed; answering the server's instructions alone", exc_info=True)
        return ""


class CallerInstructions:
    def __init__(self, app: ASGIApp, hook: Any) -> None:
        self.app = app
        self.hook = hook  # McpSettings.caller_instructions (None: none)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hook = self.hook
        if hook is None or scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        first = await receive()
        principal = scope.get("state", {}).get("principal")
        token = None
        if principal is not None and _asks_for_instructions(first.get("body", b"")):
            token = for_caller.set(await _caller_text(hook, principal))
        try:
            await self.app(scope, replaying(first, receive), send)
        finally:
            if token is not None:
                for_caller.reset(token)
