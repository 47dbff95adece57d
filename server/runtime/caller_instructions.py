"""Instructions written for the caller: an `initialize` over /mcp answers the server's instructions
followed by what `McpSettings.caller_instructions` says of the authenticated caller (the
workspaces it may name, say), so an agent's first call needs nothing it was not told.

The text is computed only for `initialize` requests (one per connection, not one per call) and
handed to the SDK's server through a context variable, which the tasks it starts for the request
inherit. Placed after BodyLimit, which has read the body whole.
"""

from __future__ import annotations

import contextvars
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

for_caller: contextvars.ContextVar[str] = contextvars.ContextVar("evidencekit_caller_instructions", default="")


def with_caller(instructions: str | None) -> str | None:
    """The server's instructions followed by the current caller's text, when there is one."""
    extra = for_caller.get()
    if not extra:
        return instructions
    return f"{instructions} {extra}" if instructions else extra


def _is_initialize(body: bytes) -> bool:
    if b"initialize" not in body:  # most messages: no parse
        return False
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


class CallerInstructions:
    def __init__(self, app: ASGIApp, source: Any) -> None:
        self.app = app
        self.source = source  # () -> the hook (McpSettings.caller_instructions), read per request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hook = self.source()
        if hook is None or scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        first = await receive()
        principal = scope.get("state", {}).get("principal")
        token = None
        if principal is not None and _is_initialize(first.get("body", b"")):
            token = for_caller.set(await hook(principal) or "")
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return first

        try:
            await self.app(scope, replay, send)
        finally:
            if token is not None:
                for_caller.reset(token)
